"""Helpers every organizer page shares: links that may not exist, leaderboards, downloads."""

from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from urllib.parse import urlencode

from django.http import Http404, HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.urls import NoReverseMatch, reverse

from assessor.collection import selectors
from assessor.collection.exporting import campaign_file_name
from assessor.collection.score_formats import (
    LAYOUTS,
    ScoreFileRefused,
    rows_policy,
    score_file_query,
    score_table_lines,
)
from assessor.http import AuthenticatedRequest
from assessor.scoring.scores import Scores


def url_if_exists(name: str, *args: object) -> str | None:
    """The URL of a page, or None while no installed part of the project serves it."""
    try:
        return reverse(name, args=args)
    except NoReverseMatch:
        return None


def leaderboard_context(
    request: AuthenticatedRequest, *, scores: Scores, default_sort: str, base_query: dict[str, str]
) -> dict:
    """The sorted rows and the sort links of a leaderboard; shared by every board."""
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
    rows = selectors.leaderboard_rows(scores, sort=sort, descending=descending)
    return {
        "columns": columns,
        "metrics": scores.metrics,
        "rows": rows,
        "rows_html": selectors.leaderboard_rows_html(rows),
        "sort": sort,
        "descending": descending,
        "topic_count": len(scores.topics),
        # What the score download form offers (collection/score_download.html).
        "score_layouts": list(LAYOUTS.items()),
        "score_runs": scores.runs,
    }


def table_or_page(request: AuthenticatedRequest, template: str, context: dict) -> str:
    """The table partial for an htmx sort click, the whole page otherwise.

    A history restore asks for the whole page even though htmx sends it.
    """
    if request.htmx and not request.htmx.history_restore_request and "columns" in context:
        return template + "#table"
    return template


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


# A download is sent in pieces of about this size: one socket write a line made a 12.7 MB
# scores file take 5-7 s through gunicorn, against about 1 s in 64 KB pieces.
DOWNLOAD_CHUNK_CHARS = 64 * 1024


def chunked_text(lines: Iterable[str], size: int = DOWNLOAD_CHUNK_CHARS) -> Iterator[str]:
    """The lines joined into pieces of at least `size` characters (the last one shorter)."""
    piece: list[str] = []
    length = 0
    for line in lines:
        piece.append(line)
        length += len(line)
        if length >= size:
            yield "".join(piece)
            piece, length = [], 0
    if piece:
        yield "".join(piece)


def download_response(lines: Iterator[str], file_name: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse(chunked_text(_primed(lines)), content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{campaign_file_name(file_name)}"'
    return response


def scores_download(
    request: AuthenticatedRequest, scores: Callable[[], Scores], base_name: str
) -> HttpResponse | StreamingHttpResponse:
    """A score table as the download's query asks (score_file_query); its rows' policy in `X-Score-Rows`."""
    table = scores_or_404(scores)
    file = score_file_query(request)
    try:
        lines = score_table_lines(table, file)
    except ScoreFileRefused as exc:
        return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
    response = download_response(lines, file.file_name(base_name))
    response["X-Score-Rows"] = rows_policy(table, file)
    return response


def scores_or_404(scores: Callable[[], Scores]) -> Scores:
    try:
        return scores()
    except LookupError as exc:
        raise Http404(str(exc.args[0] if exc.args else exc)) from None
