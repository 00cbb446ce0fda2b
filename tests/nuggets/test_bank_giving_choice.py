"""Giving a bank post-edit: the organizer picks the LLM bank it starts from, seeing each one's job, model and size;
the work's pages name it. The bank workspace shows the report request its questions are for."""

import re

import pytest
from django.urls import reverse

from assessor.models import AssessorWork, Job, LabelSource
from assessor.work.roles import Role
from assessor.work.services import WorkError
from nuggets.banks import Question, bank_store
from nuggets.giving import nugget_work_give
from nuggets.kinds import LABEL_FAMILY
from nuggets.models import Nugget, NuggetSet
from reports.models import ReportRequest
from tests.builders import make_batch, make_nugget_set, make_topic, make_user, source_of
from tests.scenarios import nugget_set_of

pytestmark = pytest.mark.django_db

PREFNUGGET_QUESTIONS = ["Which pigment gives leaves their green?", "Why does chlorophyll break down in autumn?",
                        "What makes the red of maple leaves?"]  # fmt: skip
QUERY_ONLY_QUESTIONS = ["Why do leaves change colour?", "When do leaves fall?"]


def llm_bank(topic, name: str, kind: str, model: str, texts: list[str]) -> NuggetSet:
    """A finished job's bank of `texts`, as PrefNugget's bank job or the query-only job stores it."""
    job = Job.objects.create(kind=kind, output_name=name, output_family=LABEL_FAMILY, model=model, status="done")
    source = source_of(LABEL_FAMILY, name, kind=LabelSource.Kind.LLM)
    return bank_store(topic_id=topic.pk, name=name, questions=[Question(text=t) for t in texts], source=source, job=job)


@pytest.fixture
def two_banks():
    """PrefNugget's bank first, the query-only bank after it: the newest is the one a silent default took."""
    topic = make_topic("leaf", "fall leaf color change chlorophyll")
    prefnugget = llm_bank(topic, "pn-bank", "prefnugget_bank", "gpt-4o-mini", PREFNUGGET_QUESTIONS)
    query_only = llm_bank(topic, "query-bank", "query_bank", "llama-3.1-8b", QUERY_ONLY_QUESTIONS)
    return topic, prefnugget, query_only


def organizer_client(client):
    client.force_login(make_user(Role.ORGANIZER))
    return client


def bank_options(page: str) -> dict[str, str]:
    """The give form's LLM bank choices: value -> the text of its label."""
    options = re.findall(r'<input type="radio" name="bank" value="([^"]*)"[^>]*>\s*(.*?)</label>', page, re.S)
    return {value: re.sub(r"\s+", " ", label).strip() for value, label in options}


def test_the_give_form_lists_each_bank_with_its_job_model_and_size(client, two_banks):
    _topic, prefnugget, query_only = two_banks
    page = organizer_client(client).get(reverse("nuggets:organize")).content.decode()
    assert bank_options(page) == {
        "pn-bank": f"pn-bank: job {prefnugget.job_id}, model gpt-4o-mini; 3 questions (topic leaf)",
        "query-bank": f"query-bank: job {query_only.job_id}, model llama-3.1-8b; 2 questions (topic leaf)",
    }
    # Of two, none is picked for the organizer.
    assert 'name="bank" value="pn-bank" checked' not in page and 'name="bank" value="query-bank" checked' not in page


def test_the_picked_bank_is_the_one_copied_not_the_newest(client, two_banks):
    topic, prefnugget, _query_only = two_banks
    assessor = make_user()
    fields = {"topics": topic.pk, "assessor": assessor.pk, "condition": "bank_auto_edit", "bank": "pn-bank"}
    response = organizer_client(client).post(reverse("nuggets:organize"), fields)
    assert response.status_code == 302
    copy = nugget_set_of(AssessorWork.objects.get(assessor=assessor))
    assert copy.drafts_id == prefnugget.pk
    assert list(copy.nuggets.order_by("position").values_list("text", flat=True)) == PREFNUGGET_QUESTIONS
    derived = Nugget.derived_from.through.objects.filter(from_nugget__nugget_set=copy)
    assert set(derived.values_list("to_nugget__nugget_set_id", flat=True)) == {prefnugget.pk}


def test_with_two_banks_and_none_picked_nothing_is_given(client, two_banks):
    topic, _prefnugget, _query_only = two_banks
    fields = {"topics": topic.pk, "assessor": make_user().pk, "condition": "bank_auto_edit"}
    response = organizer_client(client).post(reverse("nuggets:organize"), fields)
    assert response.status_code == 400
    assert "Choose the LLM bank to post-edit" in response.content.decode()
    assert not AssessorWork.objects.exists()
    # The service refuses the same silent choice, naming both banks.
    with pytest.raises(WorkError, match=r"several LLM question banks \(pn-bank, query-bank\)"):
        nugget_work_give(topic=topic, assessor=make_user(), condition="auto_edit", by=None, form="questions")
    assert not NuggetSet.objects.filter(kind=NuggetSet.Kind.AUTO_EDIT).exists()


def test_one_bank_is_shown_and_preselected(client):
    topic = make_topic("leaf", "fall leaf color change chlorophyll")
    only = llm_bank(topic, "pn-bank", "prefnugget_bank", "gpt-4o-mini", PREFNUGGET_QUESTIONS)
    page = organizer_client(client).get(reverse("nuggets:organize")).content.decode()
    assert bank_options(page) == {"pn-bank": f"pn-bank: job {only.job_id}, model gpt-4o-mini; 3 questions (topic leaf)"}
    assert re.search(r'<input type="radio" name="bank" value="pn-bank"[^>]*checked', page)


def test_a_bank_of_a_job_still_running_is_not_offered(client, two_banks):
    _topic, _prefnugget, query_only = two_banks
    Job.objects.filter(pk=query_only.job_id).update(status="running")
    page = organizer_client(client).get(reverse("nuggets:organize")).content.decode()
    assert list(bank_options(page)) == ["pn-bank"]


def test_the_drafts_field_is_not_taken_for_a_bank(client, two_banks):
    topic, _prefnugget, _query_only = two_banks
    fields = {"topics": topic.pk, "assessor": make_user().pk, "condition": "bank_auto_edit", "bank": "pn-bank",
              "drafts": "query-bank"}  # fmt: skip
    response = organizer_client(client).post(reverse("nuggets:organize"), fields)
    assert response.status_code == 400 and not AssessorWork.objects.exists()


def test_fact_post_editing_still_starts_from_the_newest_drafts(client):
    topic = make_topic()
    make_nugget_set(topic, name="draft-old", kind=NuggetSet.Kind.DRAFT, texts=["old draft"])
    make_nugget_set(topic, name="draft-new", kind=NuggetSet.Kind.DRAFT, texts=["new draft one", "new draft two"])
    assessor = make_user()
    fields = {"topics": topic.pk, "assessor": assessor.pk, "condition": "auto_edit"}
    assert organizer_client(client).post(reverse("nuggets:organize"), fields).status_code == 302
    copy = nugget_set_of(AssessorWork.objects.get(assessor=assessor))
    assert list(copy.nuggets.order_by("position").values_list("text", flat=True)) == ["new draft one", "new draft two"]


def test_the_workspace_and_the_topic_page_name_the_bank_started_from(client, two_banks):
    topic, prefnugget, _query_only = two_banks
    work = nugget_work_give(
        topic=topic, assessor=make_user(), condition="auto_edit", by=None, form="questions", drafts_name="pn-bank"
    )
    named = f"pn-bank (LLM question bank; job {prefnugget.job_id}, model gpt-4o-mini; 3 questions)"
    client.force_login(work.assessor)
    workspace = client.get(reverse("nuggets:work", args=[work.pk])).content.decode()
    assert re.search(r'id="started-from">Started from the LLM bank ([^<]*)</p>', workspace).group(1) == named
    topic_page = organizer_client(client).get(reverse("nuggets:organize_topic", args=[topic.pk])).content.decode()
    assert re.search(r'<dd class="started-from">([^<]*)</dd>', topic_page).group(1) == named


def test_the_bank_workspace_shows_the_request_and_a_sticky_bar(client):
    topic = make_topic("leaf", "fall leaf color change chlorophyll")
    ReportRequest.objects.create(
        topic=topic, title=topic.query, background="For a child who asks\nwhy leaves turn.",
        problem_statement="Explain the colours simply.", imported_from=make_batch(),
    )  # fmt: skip
    work = nugget_work_give(topic=topic, assessor=make_user(), condition="manual", by=None, form="questions")
    client.force_login(work.assessor)
    page = client.get(reverse("nuggets:work", args=[work.pk])).content.decode()
    request = re.search(r'<details class="panel request-text" id="request-text" open>.*?</details>', page, re.S)
    assert request is not None
    request = request.group(0)
    assert "For a child who asks<br>why leaves turn." in request and "Explain the colours simply." in request
    sticky = page[page.index('id="judge-sticky"') : page.index('<div class="ws-columns">')]
    assert 'id="connection"' in sticky and 'id="submit-form"' in sticky
    assert page.count('id="submit-form"') == 1 and page.count('id="connection"') == 1
    # A change answers with the panel and the bar's toolbar, whose count went up.
    response = client.post(
        reverse("nuggets:op", args=[work.pk, "add"]), {"text": "Why?", "version": 0}, HTTP_ACCEPT="application/json"
    )
    assert '<strong id="nugget-count">1</strong>' in response.json()["bar"]
    assert 'id="submit-form"' not in response.json()["panel"]


def test_a_fact_workspace_keeps_its_toolbar_in_the_panel(client):
    topic = make_topic()
    work = nugget_work_give(topic=topic, assessor=make_user(), condition="manual", by=None)
    client.force_login(work.assessor)
    page = client.get(reverse("nuggets:work", args=[work.pk])).content.decode()
    assert 'id="judge-sticky"' not in page and 'id="request-text"' not in page
    panel = page[page.index('<section id="nugget-panel"') :]
    assert 'id="submit-form"' in panel
