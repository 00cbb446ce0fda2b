"""The README's tour: the demo's NIST labels and an LLM job on the fake server seed a disagreement study."""

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from assessor.jobs.engine import job_run_sync
from assessor.models import AssessorWork, Citation
from metaeval.studies import study_create
from support.auto import auto_support_job_create
from support.judging import support_page_load

pytestmark = pytest.mark.django_db

SCRATCH_TOPICS = ["2024-214096", "2024-213817"]  # the topics NIST judged from scratch


def test_a_study_of_nist_from_scratch_against_an_llm_on_the_demo(llm_server):
    call_command("load_demo", stdout=io.StringIO(), stderr=io.StringIO())
    organizer, assessor = User.objects.get(username="organizer"), User.objects.get(username="assessor1")
    job = auto_support_job_create(name="llm-support", topics=SCRATCH_TOPICS, user=organizer)
    job_run_sync(job.pk)
    study = study_create(
        name="eclipse", family="support", source_a="nist-scratch", source_b="llm-support",
        assessor=assessor, by=organizer, seed=1,
    )  # fmt: skip
    assert sorted(study.sample) == sorted(SCRATCH_TOPICS)
    assert [len(items) for items in study.sample.values()] == [15, 15]
    for work in AssessorWork.objects.filter(source=study.judge):
        assert work.assessor == assessor and work.independent
        page = support_page_load(work=work)
        assert page.pairs_total == 15 and all(row.label is None and row.shown is None for row in page.rows)
        assert not Citation.objects.filter(pk__in=work.items, segment__text="").exists()
