"""The organizer pages of the collection: topics, runs, leaderboards, uploads, qrels downloads.

What the apps add to them (columns, sections, labels, score sources, their own
downloads) comes from `assessor.registry`.
"""

import tempfile
from pathlib import Path

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from assessor.collection import deleting, selectors
from assessor.collection.exporting import qrels_lines
from assessor.collection.forms import UploadForm
from assessor.collection.importing.base import ImportFailure, statistics_refresh
from assessor.collection.kept_scores import family_sources
from assessor.collection.pages import download_response
from assessor.collection.run_join import RunJoinRefused, join_plan, runs_join
from assessor.http import AuthenticatedRequest
from assessor.models import Run, RunAlias, Topic
from assessor.registry import UploadRow, registry
from assessor.work.roles import organizer_required

ANSWERS_PER_PAGE = 25


# --- Topics and runs ---------------------------------------------------------------


@organizer_required
def topic_list(request: AuthenticatedRequest) -> HttpResponse:
    sources, rows = selectors.topics_overview()
    titles = selectors.topic_count_titles()
    context = {"sources": sources, "rows": rows, "count_titles": titles, "column_count": 3 + len(sources) + len(titles)}
    return render(request, "collection/topic_list.html", context)


@organizer_required
def topic_detail(request: AuthenticatedRequest, topic_id: str) -> HttpResponse:
    topic = get_object_or_404(Topic, pk=topic_id)
    all_sources = selectors.qrel_source_names()
    source = request.GET.get("source") or None
    if source not in all_sources:
        source = None
    answers = selectors.answers_queryset().filter(topic=topic).order_by("run__run_id")
    page = Paginator(answers, ANSWERS_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "topic": topic,
        "all_sources": all_sources,
        "source": source,
        "page": page,
        "answers": selectors.answer_views(list(page.object_list)),
    }
    # The nuggets and segments are read once, on the first page; the further pages are the answers'.
    if page.number == 1:
        sources, segments = selectors.topic_relevant_segments(topic=topic, source=source)
        context.update(
            sources=sources,
            segments=segments,
            texted=[row for row in segments if row.segment.text],
            untexted=[row for row in segments if not row.segment.text],
            panels=selectors.topic_panels(topic=topic),
        )
    return render(request, "collection/topic_detail.html", context)


@organizer_required
def run_list(request: AuthenticatedRequest) -> HttpResponse:
    return render(request, "collection/run_list.html", {"runs": selectors.runs_overview()})


@organizer_required
def run_detail(request: AuthenticatedRequest, run_id: str) -> HttpResponse:
    run = Run.objects.filter(run_id=run_id).first()
    if run is None:
        # The id of a run joined into another: its page is the other run's.
        alias = get_object_or_404(RunAlias.objects.select_related("run"), alias=run_id)
        return redirect("collection:run", alias.run.run_id)
    sections, missing = selectors.run_score_sections(run=run)
    context = {
        "run": run,
        "answers": selectors.run_answers(run=run),
        "sections": sections,
        "missing": missing,
        "aliases": list(run.aliases.select_related("created_by")),
        "other_run_ids": list(Run.objects.exclude(pk=run.pk).values_list("run_id", flat=True)),
    }
    return render(request, "collection/run_detail.html", context)


@organizer_required
def run_join(request: AuthenticatedRequest, run_id: str) -> HttpResponse:
    """Join another run into this one: GET shows what would move, POST (the confirmation) joins."""
    run = get_object_or_404(Run, run_id=run_id)
    merge = (request.POST.get("merge") if request.method == "POST" else request.GET.get("merge")) or ""
    context: dict = {"run": run, "merge": merge.strip(), "plan": None, "refusal": None}
    if not merge.strip():
        context["refusal"] = "Name the run to join into this one."
        return render(request, "collection/run_join.html", context, status=400)
    if request.method == "POST":
        try:
            result = runs_join(keep=run.run_id, merge=merge, by=request.user)
        except RunJoinRefused as refusal:
            context["refusal"] = str(refusal)
        else:
            messages.success(request, result.summary())
            return redirect("collection:run", result.keep)
    else:
        try:
            context["plan"] = join_plan(keep=run.run_id, merge=merge)
        except RunJoinRefused as refusal:
            context["refusal"] = str(refusal)
        else:
            context["refusal"] = context["plan"].refusal if context["plan"].conflicts else None
    status = 409 if context["refusal"] else 200
    return render(request, "collection/run_join.html", context, status=status)


# --- Leaderboards --------------------------------------------------------------------


@organizer_required
def leaderboards(request: AuthenticatedRequest) -> HttpResponse:
    families = [(family, family_sources(family)) for family in registry.score_families]
    context: dict = {"families": families}
    # Each family's source keys by name too ("conditions", "methods"), for the tests and templates that want one.
    context.update({family.name: [source.key for source in sources] for family, sources in families})
    return render(request, "collection/leaderboards.html", context)


# --- Upload -----------------------------------------------------------------------------


def _without_folder(text: str, folder: str) -> str:
    # The temporary folder means nothing to the person who uploaded the file.
    return text.replace(folder.rstrip("/") + "/", "")


@organizer_required
def upload(request: AuthenticatedRequest) -> HttpResponse:
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
    context["uploads"] = deleting.upload_listing()
    return render(request, "collection/upload.html", context)


@organizer_required
def upload_delete(request: AuthenticatedRequest, kind: str, name: str) -> HttpResponse:
    """A confirmation page (what would go, or why it cannot), then the deletion on POST."""
    deletable = registry.deletables.get(kind)
    row = deleting.upload_row(kind=kind, name=name)
    if deletable is None or row is None:
        raise Http404(f"There is no upload of kind {kind!r} named {name!r} (it may have been deleted already).")
    if request.method == "POST" and not row.blockers:
        try:
            deleted = deleting.upload_delete(kind=kind, name=name, actor=request.user)
        except deleting.DeleteRefused as refusal:
            row = UploadRow(name=row.name, summary=row.summary, blockers=refusal.reasons)
        else:
            messages.success(request, f"Deleted the {deletable.label} {name} ({deleted}).")
            return redirect(reverse("collection:upload") + "#uploads")
    status = 409 if request.method == "POST" else 200
    return render(request, "collection/upload_delete.html", {"deletable": deletable, "row": row}, status=status)


# --- Downloads ------------------------------------------------------------------------------


@organizer_required
def download_qrels(request: AuthenticatedRequest, source: str) -> StreamingHttpResponse:
    # An unknown source is a 404 that names the sources there are (`download_response`).
    return download_response(qrels_lines(source=source), f"qrels.{source}.txt")
