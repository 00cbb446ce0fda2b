"""What the resume tests share: a job run as by a worker that stops between its last item and the job's end."""

import pytest

from assessor.jobs import engine


def run_stopped_before_its_end(job_id: int) -> dict[str, int]:
    """Work every item of the job in this process, its end skipped as a worker stopped after the last item's commit
    would skip it: every item finished, the job left open and its labels not counted. The items' counts by outcome."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "job_complete_if_finished", lambda job_id: None)
        return engine.job_run_sync(job_id)
