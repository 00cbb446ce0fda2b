"""Fixtures of the example app's tests: its small collection, and its judge run in this process."""

import pytest

from assessor.jobs.engine import job_run_sync
from assessor.labelkit.job import AnswerJob
from tests.verdict_tests.collection import make_verdict_collection
from tests.verdicts.parts import VERDICTS


@pytest.fixture
def verdict_collection(db):
    return make_verdict_collection()


@pytest.fixture
def run_judge(llm_server):
    """Create the judge's job on the chosen runs and topics and work every item here (what the jobs page's worker
    does); returns the job."""

    def run(name: str, runs: list[str] | None = None, topics: list[str] | None = None):
        job = AnswerJob(VERDICTS).create(name=name, runs=runs, topics=topics)
        job_run_sync(job.pk, threads=1)
        job.refresh_from_db()
        return job

    return run
