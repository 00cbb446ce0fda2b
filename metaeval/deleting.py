"""Deleting an imported score table: nothing in the project is computed from one, so it only needs confirming."""

from django.db.models import Count

from assessor.collection.deleting import counted
from assessor.registry import Deletable, UploadRow
from metaeval.models import ScoreTable


def score_table_rows() -> list[UploadRow]:
    tables = ScoreTable.objects.annotate(rows=Count("scores")).order_by("name")
    return [UploadRow(name=table.name, summary=counted(table.rows, "score"), blockers=[]) for table in tables]


def score_table_delete(name: str) -> str:
    table = ScoreTable.objects.get(name=name)
    rows = table.scores.count()
    table.delete()
    return counted(rows, "score")


SCORES_DELETABLE = Deletable(
    kind="scores", label="score table", rows=score_table_rows, delete=score_table_delete, order=30
)
