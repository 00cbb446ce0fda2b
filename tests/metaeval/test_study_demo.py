"""The README's tour: the demo's NIST labels and an LLM job on the fake server seed a disagreement study."""

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from assessor.jobs.engine import job_run_sync
from assessor.models import AssessorWork, Campaign, Citation, Topic
from assessor.models.scope import campaign_scope
from assignment.judging import assign_replicate_give
from assignment.models import AssignmentLabel
from metaeval.studies import study_create
from support.auto import auto_support_job_create
from support.judging import support_page_load
from support.models import SupportLabel
from support.services import support_replicate_give

pytestmark = pytest.mark.django_db

SCRATCH_TOPICS = ["2024-214096", "2024-213817"]  # the topics NIST judged from scratch
TREC_DEMO = "trec-2024-rag-demo"  # the demo's campaign of the TREC topics (the kiddie requests are in another)


def test_a_study_of_nist_from_scratch_against_an_llm_on_the_demo(llm_server):
    call_command("load_demo", stdout=io.StringIO(), stderr=io.StringIO())
    with campaign_scope(Campaign.objects.get(slug=TREC_DEMO)):
        _study_of_nist_from_scratch_against_an_llm()


def _study_of_nist_from_scratch_against_an_llm() -> None:
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


def test_a_second_assessor_beside_nist_on_the_demo():
    """The refusal the demo met ("no support work under the method 'nist-scratch' to replicate"): NIST's
    from-scratch pairs and its ManualAssign are given to a second assessor, blind to NIST's labels."""
    call_command("load_demo", stdout=io.StringIO(), stderr=io.StringIO())
    with campaign_scope(Campaign.objects.get(slug=TREC_DEMO)):
        _second_assessor_beside_nist()


def _second_assessor_beside_nist() -> None:
    organizer, assessor = User.objects.get(username="organizer"), User.objects.get(username="assessor1")
    topic = Topic.objects.get(pk="2024-213817")
    work = support_replicate_give(topic=topic, assessor=assessor, by=organizer, of_method="nist-scratch",
                                  method_name="second-scratch")  # fmt: skip
    # Exactly NIST's judged pairs with passage text, read independently.
    nist = set(
        SupportLabel.objects.filter(
            method="nist-scratch", citation__position=0, citation__sentence__answer__topic=topic
        )
        .exclude(citation__segment__text="")
        .values_list("citation_id", flat=True)
    )
    assert nist and set(work.items) == nist
    page = support_page_load(work=work)
    assert page.pairs_total == len(nist) and all(row.label is None and row.shown is None for row in page.rows)
    nist_topic = AssignmentLabel.objects.filter(assigner="nist").values_list("answer__topic_id", flat=True).first()
    assigned = assign_replicate_give(topic=Topic.objects.get(pk=nist_topic), assessor=assessor, by=organizer,
                                     of_assigner="nist", assigner_name="second-assign")  # fmt: skip
    assert assigned.nugget_set_name == "nist" and assigned.source.replicate_of.name == "nist"
