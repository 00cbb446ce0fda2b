"""Verdicts from a JSONL file: {"run_id": ..., "topic_id": ..., "verdict": "yes" | "no"} per line, into a named source.

The import is atomic (assessor.importing.base.import_file): a bad line names the
file, the line and the field, and nothing is written.
"""

import json
from pathlib import Path

from django.contrib.auth.models import User

from assessor.importing.base import ImportFailure, ImportResult, Writes, import_file, read_lines
from assessor.models import Answer
from assessor.sources import import_source_claim
from tests.verdicts.kinds import IMPORT_VERDICTS, LABEL_FAMILY, SCORE_FAMILY
from tests.verdicts.models import Verdict

FIELDS = ("run_id", "topic_id", "verdict")


def verdicts_import(*, path: Path, name: str, replace: bool = False, user: User | None = None) -> ImportResult:
    """The registry's `Importer.function` (the upload page and `import_verdicts`)."""
    path = Path(path)
    return import_file(
        lambda writes: _prepare(writes, path=path, name=name, replace=replace, user=user),
        kind=IMPORT_VERDICTS,
        path=path,
        options={"name": name, "replace": replace},
        user=user,
    )


def _parsed(path: Path):
    for number, line in read_lines(path):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ImportFailure(f"not JSON ({exc.msg})", path=path, line=number) from None
        if not isinstance(row, dict):
            raise ImportFailure("expected a JSON object", path=path, line=number)
        for field in FIELDS:
            if not isinstance(row.get(field), str) or not row[field]:
                raise ImportFailure("missing, or not a string", path=path, line=number, field=field)
        if row["verdict"] not in ("yes", "no"):
            raise ImportFailure(f"must be yes or no, not {row['verdict']!r}", path=path, line=number, field="verdict")
        yield number, row


def _prepare(writes: Writes, *, path: Path, name: str, replace: bool, user: User | None) -> ImportResult:
    if not name:
        raise ImportFailure("a source name is required", path=path, field="name")
    rows = list(_parsed(path))
    source_id = import_source_claim(writes=writes, family=LABEL_FAMILY, name=name, user=user, path=path, option="name")
    answers = {
        (run_id, topic_id): pk
        for pk, run_id, topic_id in Answer.objects.filter(run__run_id__in={row["run_id"] for _, row in rows}).values_list(
            "pk", "run__run_id", "topic_id"
        )
    }
    stored = {verdict.answer_id: verdict for verdict in Verdict.objects.filter(source_id=source_id)}
    result = ImportResult(path=str(path))
    new, changed, seen = [], [], {}
    for number, row in rows:
        result.lines += 1
        answer_id = answers.get((row["run_id"], row["topic_id"]))
        if answer_id is None:
            raise ImportFailure(f"no answer of run {row['run_id']!r} to topic {row['topic_id']!r}", path=path, line=number, field="run_id")
        if answer_id in seen:
            raise ImportFailure(f"answer repeated (first on line {seen[answer_id]})", path=path, line=number, field="run_id")
        seen[answer_id] = number
        existing = stored.get(answer_id)
        if existing is None:
            new.append(Verdict(answer_id=answer_id, source_id=source_id, imported_from=writes.batch, label=row["verdict"]))
        elif existing.label == row["verdict"]:
            result.unchanged += 1
        elif replace and existing.imported_from_id is not None:
            existing.label, existing.imported_from = row["verdict"], writes.batch
            changed.append(existing)
        else:
            raise ImportFailure(
                f"{name!r} holds {existing.label!r} for this answer; import with replace to change it",
                path=path,
                line=number,
                field="verdict",
            )
    writes.update(changed, ["label", "imported_from"])
    writes.create(new)
    # The source's kept scores are refreshed in the topics the file named (ScoreRefresh.TOUCHED).
    writes.scores_touch(family=SCORE_FAMILY, columns=(name,), topics={row["topic_id"] for _, row in rows})
    result.created, result.replaced = len(new), len(changed)
    return result
