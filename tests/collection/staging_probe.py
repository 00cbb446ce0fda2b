"""Imports on a file SQLite database, where the switch attaches the staging file; run by test_import_staging.py.

Prints as JSON: every table before and after a run import whose last line is
bad, then what a good import wrote.
"""

import json
import sys
from pathlib import Path

import django

django.setup()

from django.apps import apps  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from assessor.collection.importing.runs import run_import  # noqa: E402
from assessor.importing.base import ImportFailure  # noqa: E402
from assessor.importing.staging import staging_directory  # noqa: E402
from assessor.models import Answer, AnswerReference, Citation, Topic  # noqa: E402


def every_table() -> dict[str, list]:
    return {
        model._meta.db_table: sorted(map(repr, model.objects.values_list()))
        for model in apps.get_models()
        if model._meta.managed and not model._meta.proxy
    }


def line(topic: str) -> str:
    record = {
        "run_id": "team.run",
        "topic_id": topic,
        "topic": f"query {topic}",
        "references": [f"{topic}#0", f"{topic}#1"],
        "answer": [{"text": "It cites.", "citations": [1, 0]}, {"text": "Twice.", "citations": [0, 1]}],
    }
    return json.dumps(record) + "\n"


def main(folder: Path) -> dict:
    call_command("migrate", verbosity=0)
    Topic.objects.bulk_create(Topic(id=f"t{number}", query=f"query t{number}") for number in range(4))
    report: dict = {"before": every_table()}
    bad = folder / "bad.jsonl"
    bad.write_text("".join(line(f"t{number}") for number in range(4)) + line("unknown"))
    try:
        run_import(path=bad)
    except ImportFailure as failure:
        report["failure"] = str(failure)
    report["after_failure"] = every_table()
    good = folder / "good.jsonl"
    good.write_text("".join(line(f"t{number}") for number in range(4)))
    run_import(path=good)
    report["answers"] = Answer.objects.count()
    report["citations"] = Citation.objects.count()
    report["references"] = AnswerReference.objects.count()
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA foreign_key_check")
        report["foreign_key_violations"] = [list(row) for row in cursor.fetchall()]
    report["staging_files"] = [path.name for path in staging_directory().iterdir()]
    return report


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]))))
