"""The page of one cell of the confusion matrix: the answers behind it, each a link to its page of every judge's
labels (metaeval.cell_items)."""

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from assessor.http import AuthenticatedRequest
from assessor.work.roles import organizer_required
from metaeval.cell_items import CellError, cell_items


@require_GET
@organizer_required
def cell(request: AuthenticatedRequest) -> HttpResponse:
    """?a=&b=&row=&column=: the items a labelled `row` and b labelled `column`, by answer."""
    params = request.GET
    try:
        found = cell_items(params.get("a", ""), params.get("b", ""), params.get("row", ""), params.get("column", ""))
    except CellError as exc:
        return render(request, "metaeval/cell.html", {"error": str(exc.args[0] if exc.args else exc)}, status=404)
    return render(request, "metaeval/cell.html", {"cell": found})
