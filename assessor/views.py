"""The home pages, the organizer pages of the collection, uploads and downloads."""

import tempfile
from collections.abc import Iterator
from importlib import import_module
from itertools import chain
from pathlib import Path
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import NoReverseMatch, reverse

from assessor import selectors
from assessor.forms import UploadForm
from assessor.importing.base import ImportFailure, statistics_refresh
from assessor.models import AssessorWork, QrelSource, Run, Topic
from assessor.roles import Role, organizer_required, user_role
from assessor.scores import SUPPORT_METRICS, Scores

ANSWERS_PER_PAGE = 25


def url_if_exists(name: str, *args) -> str | None:
    """The URL of a page another part of the project adds, or None while it is not there."""
    try:
        return reverse(name, args=args)
    except NoReverseMatch:
        return None


# The pages where an assessor does a kind of work; each takes the AssessorWork id.
WORK_URL_NAMES = {
    AssessorWork.Kind.NUGGETS_MANUAL: "nuggets:work",
    AssessorWork.Kind.NUGGETS_AUTO_EDIT: "nuggets:work",
    AssessorWork.Kind.ASSIGN_MANUAL: "judge:assign",
    AssessorWork.Kind.SUPPORT_SCRATCH: "support:judge",
    AssessorWork.Kind.SUPPORT_POSTEDIT: "support:judge",
}


def organizer_links() -> list[tuple[str, str, str]]:
    """(title, description, url) of the organizer's destinations that exist."""
    candidates = [
        ("Topics", "queries, relevant segments, nuggets and labels", url_if_exists("collection:topics")),
        ("Runs", "answers and their per-topic scores", url_if_exists("collection:runs")),
        ("Leaderboards", "runs ranked under each condition", url_if_exists("collection:leaderboards")),
        ("Upload", "import topics, runs, qrels, nuggets, labels", url_if_exists("collection:upload")),
        ("Assessors", "give topics to assessors, follow their work", url_if_exists("nuggets:organize")),
        ("Jobs", "LLM jobs: progress, cost, failures", url_if_exists("jobs:list")),
        ("Meta-evaluation", "compare conditions: tau, agreement", url_if_exists("metaeval:index")),
        ("Admin", "every record, with its provenance", url_if_exists("admin:index")),
    ]
    return [(title, text, url) for title, text, url in candidates if url]


@login_required
def home(request: HttpRequest) -> HttpResponse:
    role = user_role(request.user)
    if role in (Role.ORGANIZER, Role.ADMIN):
        context = {"links": organizer_links(), "counts": selectors.collection_counts()}
        return render(request, "home_organizer.html", context)
    if role == Role.ASSESSOR:
        queue = [
            (work, url_if_exists(WORK_URL_NAMES[work.kind], work.pk) if work.kind in WORK_URL_NAMES else None)
            for work in selectors.assessor_queue(user=request.user)
        ]
        return render(request, "home_assessor.html", {"queue": queue})
    return render(request, "home.html")


# --- Topics and runs ---------------------------------------------------------------


@organizer_required
def topic_list(request: HttpRequest) -> HttpResponse:
    sources, rows = selectors.topics_overview()
    return render(request, "collection/topic_list.html", {"sources": sources, "rows": rows})


@organizer_required
def topic_detail(request: HttpRequest, topic_id: str) -> HttpResponse:
    topic = get_object_or_404(Topic, pk=topic_id)
    all_sources = selectors.qrel_source_names()
    source = request.GET.get("source") or None
    if source not in all_sources:
        source = None
    sources, segments = selectors.topic_relevant_segments(topic=topic, source=source)
    answers = selectors.answers_queryset().filter(topic=topic).order_by("run__run_id")
    page = Paginator(answers, ANSWERS_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "topic": topic,
        "all_sources": all_sources,
        "source": source,
        "sources": sources,
        "segments": segments,
        "nugget_sets": selectors.topic_nugget_sets(topic=topic),
        "page": page,
        "answers": selectors.answer_views(list(page.object_list)),
    }
    return render(request, "collection/topic_detail.html", context)


@organizer_required
def run_list(request: HttpRequest) -> HttpResponse:
    return render(request, "collection/run_list.html", {"runs": selectors.runs_overview()})


@organizer_required
def run_detail(request: HttpRequest, run_id: str) -> HttpResponse:
    run = get_object_or_404(Run, run_id=run_id)
    sections, missing = selectors.run_score_sections(run=run)
    context = {"run": run, "answers": selectors.run_answers(run=run), "sections": sections, "missing": missing}
    return render(request, "collection/run_detail.html", context)


# --- Leaderboards --------------------------------------------------------------------


@organizer_required
def leaderboards(request: HttpRequest) -> HttpResponse:
    context = {
        "conditions": selectors.nugget_conditions(),
        "methods": selectors.support_methods(),
        "condition_url": url_if_exists("assignment:leaderboard"),
    }
    return render(request, "collection/leaderboards.html", context)


def leaderboard_context(
    request: HttpRequest, *, scores: Scores, default_sort: str, base_query: dict[str, str]
) -> dict:
    """The sorted rows and the sort links of a leaderboard; shared by the condition and support boards."""
    sort = request.GET.get("sort", default_sort)
    if sort not in (*scores.metrics, "run"):
        sort = default_sort
    descending = request.GET.get("dir", "asc" if sort == "run" else "desc") == "desc"
    columns = []
    for column in ("run", *scores.metrics):
        # A click on the sorted column flips it; on another one, it sorts the natural way.
        if column == sort:
            direction = "asc" if descending else "desc"
        else:
            direction = "asc" if column == "run" else "desc"
        query = urlencode({**base_query, "sort": column, "dir": direction})
        columns.append({"name": column, "query": f"?{query}", "sorted": column == sort})
    return {
        "columns": columns,
        "metrics": scores.metrics,
        "rows": selectors.leaderboard_rows(scores, sort=sort, descending=descending),
        "sort": sort,
        "descending": descending,
        "topic_count": len(scores.topics),
    }


def table_or_page(request: HttpRequest, template: str, context: dict) -> str:
    """The table partial for an htmx sort click, the whole page otherwise.

    A history restore asks for the whole page even though htmx sends it.
    """
    if request.htmx and not request.htmx.history_restore_request and "columns" in context:
        return template + "#table"
    return template


@organizer_required
def support_leaderboard(request: HttpRequest) -> HttpResponse:
    methods = selectors.support_methods()
    method = request.GET.get("method") or (methods[0] if methods else "")
    context: dict = {"methods": methods, "method": method, "error": ""}
    if methods is None:
        context["error"] = "Support scores are not available yet."
    elif method:
        try:
            scores = selectors.support_scores_of(method=method)
        except LookupError as exc:
            context["error"] = str(exc.args[0] if exc.args else exc)
        else:
            base_query = {"method": method}
            context.update(
                leaderboard_context(request, scores=scores, default_sort=SUPPORT_METRICS[0], base_query=base_query)
            )
            context["download_url"] = url_if_exists("collection:download_support_scores", method)
    return render(request, table_or_page(request, "collection/support_leaderboard.html", context), context)


# --- Upload -----------------------------------------------------------------------------


def _without_folder(text: str, folder: str) -> str:
    # The temporary folder means nothing to the person who uploaded the file.
    return text.replace(folder.rstrip("/") + "/", "")


@organizer_required
def upload(request: HttpRequest) -> HttpResponse:
    context: dict = {"result": None, "failure": None}
    if request.method == "POST":
        form = UploadForm(request.POST, request.FILES)
        if form.is_valid():
            uploaded = form.cleaned_data["file"]
            with tempfile.TemporaryDirectory(prefix="upload-") as folder:
                # The importers name the file in their errors and batches: keep the uploaded name.
                path = Path(folder) / (Path(uploaded.name).name or "upload")
                with path.open("wb") as handle:
                    for chunk in uploaded.chunks():
                        handle.write(chunk)
                try:
                    result = form.importer()(path=path, user=request.user, **form.importer_kwargs())
                except ImportFailure as failure:
                    context["failure"] = {
                        "file": Path(failure.path).name if failure.path else path.name,
                        "line": failure.line,
                        "field": failure.field,
                        "message": _without_folder(failure.message, folder),
                        "text": _without_folder(str(failure), folder),
                    }
                else:
                    statistics_refresh(result)
                    context["result"] = result
                    context["warnings"] = [_without_folder(w, folder) for w in result.warnings]
                    context["file_name"] = path.name
    else:
        form = UploadForm()
    context["form"] = form
    return render(request, "collection/upload.html", context)


# --- Downloads ------------------------------------------------------------------------------


def _export(module: str, name: str):
    try:
        return getattr(import_module(module), name)
    except (ImportError, AttributeError):
        raise Http404(f"The {name} export is not available yet.") from None


def _primed(lines: Iterator[str]) -> Iterator[str]:
    """Start the generator now, so a missing condition is a 404 and not a broken download."""
    lines = iter(lines)
    try:
        first = next(lines)
    except StopIteration:
        return iter(())
    except LookupError as exc:
        raise Http404(str(exc.args[0] if exc.args else exc)) from None
    return chain([first], lines)


def _download(lines: Iterator[str], file_name: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse(_primed(lines), content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{file_name}"'
    return response


@organizer_required
def download_qrels(request: HttpRequest, source: str) -> StreamingHttpResponse:
    get_object_or_404(QrelSource, name=source)
    return _download(_export("assessor.exporting", "qrels_lines")(source=source), f"qrels.{source}.txt")


@organizer_required
def download_nuggets(request: HttpRequest, name: str) -> StreamingHttpResponse:
    return _download(_export("nuggets.exporting", "nuggets_lines")(name=name), f"nuggets.{name}.jsonl")


@organizer_required
def download_assignments(request: HttpRequest, nuggets: str, assigner: str) -> StreamingHttpResponse:
    lines = _export("assignment.exporting", "assignments_lines")(
        nuggets=nuggets, assigner=assigner, provenance="provenance" in request.GET
    )
    return _download(lines, f"assignments.{nuggets}.{assigner}.jsonl")


@organizer_required
def download_scores(request: HttpRequest, nuggets: str, assigner: str) -> StreamingHttpResponse:
    scores_lines = _export("assignment.exporting", "scores_lines")
    try:
        scores = selectors.nugget_scores_of(nuggets=nuggets, assigner=assigner)
    except LookupError as exc:
        raise Http404(str(exc.args[0] if exc.args else exc)) from None
    return _download(scores_lines(scores), f"scores.{nuggets}.{assigner}.tsv")


@organizer_required
def download_support(request: HttpRequest, method: str) -> StreamingHttpResponse:
    lines = _export("support.exporting", "support_lines")(method=method, provenance="provenance" in request.GET)
    return _download(lines, f"support.{method}.jsonl")


@organizer_required
def download_support_scores(request: HttpRequest, method: str) -> StreamingHttpResponse:
    support_scores_lines = _export("support.exporting", "support_scores_lines")
    try:
        scores = selectors.support_scores_of(method=method)
    except LookupError as exc:
        raise Http404(str(exc.args[0] if exc.args else exc)) from None
    return _download(support_scores_lines(scores), f"support_scores.{method}.tsv")
