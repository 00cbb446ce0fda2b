"""Verdicts out, as JSONL: the importer's fields, and who or what made each (its provenance)."""

import json
from collections.abc import Iterator

from assessor.scoring.lifecycle import labels_counted
from tests.verdicts.kinds import LABEL_FAMILY
from tests.verdicts.models import Verdict


def verdict_lines(*, name: str) -> Iterator[str]:
    """The counted verdicts of a source, one JSON object per line; LookupError when it has none."""
    verdicts = labels_counted(Verdict.objects.filter(source__family=LABEL_FAMILY, source__name=name))
    rows = verdicts.order_by("answer__run__run_id", "answer__topic_id").values_list(
        "answer__run__run_id", "answer__topic_id", "label", "created_by__username", "job_id", "imported_from_id"
    )
    if not rows.exists():
        raise LookupError(f"no counted verdicts under {name!r}")
    for run_id, topic_id, label, person, job_id, batch_id in rows.iterator():
        made_by = f"user:{person}" if person else f"job:{job_id}" if job_id else f"file:{batch_id}"
        yield json.dumps({"run_id": run_id, "topic_id": topic_id, "verdict": label, "made_by": made_by}) + "\n"
