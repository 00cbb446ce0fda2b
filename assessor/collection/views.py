"""The organizer pages of the collection: topics, runs, leaderboards, uploads, qrels downloads.

What the apps add to them (columns, sections, labels, score sources, their own
downloads) comes from `assessor.registry`.
"""

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from assessor.collection import deleting, selectors, uploads
from assessor.collection.answer_page import answer_page
from assessor.collection.exporting import qrels_lines
from assessor.collection.forms import UploadForm
from assessor.collection.pages import download_response
from assessor.collection.run_join import RunJoinRefused, join_plan, runs_join
from assessor.http import AuthenticatedRequest
from assessor.models import Answer, Run, RunAlias, Topic, Upload
from assessor.models.keys import topic_key
from assessor.registry import UploadRow, registry
from assessor.scoring.kept import family_columns
from assessor.scoring.lifecycle import open_work_overview
from assessor.work.pages import closed_refusal
from assessor.work.roles import organizer_required

ANSWERS_PER_PAGE = 25


# --- Topics and runs ---------------------------------------------------------------


@organizer_required
def topic_list(request: AuthenticatedRequest) -> HttpResponse:
    sources, rows = selectors.topics_overview()
    titles = selectors.topic_count_titles()
    context = {
        "sources": sources,
        "rows": rows,
        "row_html": selectors.topic_rows_html(rows),
        "count_titles": titles,
        "column_count": 3 + len(sources) + len(titles),
    }
    return render(request, "collection/topic_list.html", context)


@organizer_required
def topic_detail(request: AuthenticatedRequest, topic_id: str) -> HttpResponse:
    topic = get_object_or_404(Topic, pk=topic_key(topic_id))  # the URL's published id (<topic:...>)
    all_sources = selectors.qrel_source_names()
    source = request.GET.get("source") or None
    if source not in all_sources:
        source = None
    answers = selectors.answers_queryset().filter(topic=topic).order_by("run__run_id")
    page = Paginator(answers, ANSWERS_PER_PAGE).get_page(request.GET.get("page"))
    answers = selectors.answer_views(list(page.object_list))
    context = {
        "topic": topic,
        "all_sources": all_sources,
        "source": source,
        "page": page,
        "answers": answers,
        "answers_html": selectors.answers_html(answers),
        "badge_legend": selectors.badge_legend(answers),
    }
    # The nuggets and segments are read once, on the first page; the further pages are the answers'.
    if page.number == 1:
        sources, segments, provisional_sources = selectors.topic_relevant_segments(topic=topic, source=source)
        context.update(
            sources=sources,
            provisional_sources=provisional_sources,
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
    answers = selectors.run_answers(run=run)
    context = {
        "run": run,
        "answers": answers,
        "answer_rows": selectors.run_answer_rows_html(answers),
        "sections": sections,
        "missing": missing,
        "aliases": list(run.aliases.select_related("created_by")),
        "panels": selectors.run_panels(run=run),
        "other_run_ids": list(Run.objects.exclude(pk=run.pk).values_list("run_id", flat=True)),
    }
    return render(request, "collection/run_detail.html", context)


@organizer_required
def answer_detail(request: AuthenticatedRequest, answer_id: int) -> HttpResponse:
    """One answer through every judge's eyes: its sentences, then each app's labels of it by source."""
    # An answer has no campaign of its own: it is its run's, which the scoped manager finds in the page's campaign.
    answer = get_object_or_404(Answer.objects.select_related("run", "topic"), pk=answer_id, run__in=Run.objects.all())
    return render(request, "collection/answer_detail.html", {"answer": answer, "page": answer_page(answer)})


@organizer_required
def run_join(request: AuthenticatedRequest, run_id: str) -> HttpResponse:
    """Join another run into this one: GET shows what would move and asks the choices, POST joins."""
    run = get_object_or_404(Run, run_id=run_id)
    data = request.POST if request.method == "POST" else request.GET
    merge = (data.get("merge") or "").strip()
    context: dict = {"run": run, "merge": merge, "plan": None, "refusal": None}
    if not merge:
        context["refusal"] = "Name the run to join into this one."
        return render(request, "collection/run_join.html", context, status=400)
    # A choice per topic both runs answer differently: answer-TOPIC = the run whose answer stays.
    choices = {key.removeprefix("answer-"): str(data[key]) for key in data if key.startswith("answer-")}
    try:
        plan = join_plan(keep=run.run_id, merge=merge)
    except RunJoinRefused as refusal:
        context["refusal"] = str(refusal)
        return render(request, "collection/run_join.html", context, status=409)
    context.update(plan=plan, choices=choices)
    if request.method == "POST" and (closed := closed_refusal(request, reverse("collection:run", args=[run.run_id]))):
        return closed
    if request.method == "POST":
        try:
            result = runs_join(keep=run.run_id, merge=merge, by=request.user, choices=choices)
        except RunJoinRefused as refusal:
            context["refusal"] = str(refusal)
            return render(request, "collection/run_join.html", context, status=409)
        messages.success(request, result.summary())
        return redirect("collection:run", result.keep)
    return render(request, "collection/run_join.html", context)


# --- Leaderboards --------------------------------------------------------------------


@organizer_required
def leaderboards(request: AuthenticatedRequest) -> HttpResponse:
    families = []
    for family in registry.score_families:
        listed = family_columns(family)
        notes = family.notes(listed)  # every source's at once: a fixed number of queries
        families.append((family, [(family.source(columns), notes[columns]) for columns in listed]))
    # What counts nowhere yet, so that a condition whose lists are all open again does not vanish unexplained.
    context: dict = {"families": families, "open_work": open_work_overview()}
    # Each family's source keys by name too ("conditions", "methods"), for the tests and templates that want one.
    context.update({family.name: [source.key for source, _ in sources] for family, sources in families})
    return render(request, "collection/leaderboards.html", context)


# --- Upload -----------------------------------------------------------------------------


@organizer_required
def upload(request: AuthenticatedRequest) -> HttpResponse:
    """The form, the recent uploads and the uploaded data; a valid POST keeps the file and queues its import."""
    if request.method == "POST" and (refusal := closed_refusal(request, reverse("collection:upload"))):
        return refusal
    if request.method == "POST":
        form = UploadForm(request.POST, request.FILES)
        if form.is_valid():
            stored = uploads.upload_store(
                uploaded=form.cleaned_data["file"],
                kind=form.cleaned_data["kind"],
                options=form.upload_options(),
                user=request.user,
            )
            uploads.upload_queue(stored)
            return redirect("collection:upload_detail", stored.pk)
    else:
        form = UploadForm()
    context = {"form": form, "recent": uploads.uploads_recent(), "uploads": deleting.upload_listing()}
    return render(request, "collection/upload.html", context)


@organizer_required
def upload_detail(request: AuthenticatedRequest, upload_id: int) -> HttpResponse:
    """An upload's progress while it is imported (htmx polls the panel), then its result or why it failed."""
    upload = get_object_or_404(Upload.objects.select_related("created_by", "batch"), pk=upload_id)
    context: dict = {
        "upload": upload,
        "progress": uploads.upload_progress(upload),
        "options": uploads.upload_options_shown(upload),
        "stalled": uploads.upload_stalled(upload),
        "stall_minutes": settings.UPLOAD_STALL_MINUTES,
    }
    if upload.state == Upload.State.FAILED:
        # The kind and options are kept, for the same file once the data is fixed or for a corrected file.
        context["form"] = UploadForm(initial={"kind": upload.kind, **upload.options})
    template = "collection/upload_detail.html"
    if request.htmx:
        template += "#upload_panel"
    response = render(request, template, context)
    if request.htmx and upload.finished:
        # The whole page once, for what only a finished upload has (the form a failed one keeps).
        response["HX-Refresh"] = "true"
    return response


@require_POST
@organizer_required
def upload_retry(request: AuthenticatedRequest, upload_id: int) -> HttpResponse:
    get_object_or_404(Upload, pk=upload_id)
    if refusal := closed_refusal(request, reverse("collection:upload_detail", args=[upload_id])):
        return refusal
    try:
        again = uploads.upload_retry(upload_id)
    except uploads.UploadRetryRefused as refusal:
        messages.error(request, str(refusal))
    else:
        uploads.upload_queue(again)
        messages.success(request, f"{again.file_name} is queued again.")
    return redirect("collection:upload_detail", upload_id)


@organizer_required
def upload_delete(request: AuthenticatedRequest, kind: str, name: str) -> HttpResponse:
    """A confirmation page (what would go, or why it cannot), then the deletion on POST."""
    deletable = registry.deletables.get(kind)
    row = deleting.upload_row(kind=kind, name=name)
    if deletable is None or row is None:
        raise Http404(f"There is no upload of kind {kind!r} named {name!r} (it may have been deleted already).")
    if request.method == "POST" and (refusal := closed_refusal(request, reverse("collection:upload") + "#uploads")):
        return refusal
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
