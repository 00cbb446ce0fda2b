"""The pages of the agreement studies: giving a replicate, the second assessors, a study, its plot and exports."""

import csv
import io
import json

import pytest
from django.test import Client
from django.urls import reverse

from assessor.models import AssessorWork, Citation, Job, LabelSource
from assessor.work.roles import Role
from metaeval.models import Study
from support.judging import support_page_load, topic_pairs
from support.models import SupportLabel
from tests.builders import make_support_label, make_user
from tests.scenarios import Scenario, give_assign, make_scenario

pytestmark = pytest.mark.django_db

PAIRS = [(0, 0), (1, 0), (2, 0), (0, 2), (1, 2)]
STUDY_TOPIC = "2024-A"


def plant_sources(scenario: Scenario) -> None:
    for (answer, sentence), a, b in zip(PAIRS, [2, 2, 1, 0, 2], [0, 1, 2, 2, 0], strict=True):
        make_support_label(scenario.answers[answer], sentence, a, method="nist-a")
        make_support_label(scenario.answers[answer], sentence, b, method="nist-b")


def organizer_of(scenario: Scenario) -> Client:
    client = Client()
    client.force_login(scenario.organizer)
    return client


def create_study(client: Client, scenario: Scenario, **overrides):
    data = {
        "name": "s1",
        "source_a": "support:nist-a",
        "source_b": "support:nist-b",
        "k": 15,
        "seed": 3,
        "assessor": scenario.assessor.pk,
        **overrides,
    }
    return client.post(reverse("metaeval:studies"), data)


def test_an_organizer_creates_a_study_and_sees_its_tables(scenario):
    plant_sources(scenario)
    client = organizer_of(scenario)
    response = create_study(client, scenario)
    assert response.status_code == 302 and response["Location"] == reverse("metaeval:study", args=["s1"])
    study = Study.objects.get(name="s1")
    assert (study.k, study.seed, study.created_by, study.items_total) == (15, 3, scenario.organizer, 5)
    page = client.get(response["Location"]).content.decode()
    for table in ("study-kappa", "study-sided", "study-distribution"):
        assert f'id="{table}"' in page
    assert "nist-a" in page and "not submitted on 1 topic" in page
    listing = client.get(reverse("metaeval:studies")).content.decode()
    assert reverse("metaeval:study", args=["s1"]) in listing
    png = client.get(reverse("metaeval:study_plot", args=["s1"]))
    assert png["Content-Type"] == "image/png" and png.content[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_form_offers_the_endpoints_and_the_llm_judge_runs_on_the_one_chosen(scenario, two_llm_endpoints):
    plant_sources(scenario)
    client = organizer_of(scenario)
    form = client.get(reverse("metaeval:studies")).content.decode()
    assert '<option value="beta">beta: model-beta at ' in form
    response = create_study(client, scenario, llm_name="s1-llm", llm_endpoint="beta")
    assert response.status_code == 302
    job = Study.objects.get(name="s1").llm_job
    assert (job.output_name, job.endpoint_name, job.model) == ("s1-llm", "beta", "model-beta")


def test_a_refused_study_says_why_on_the_form(scenario):
    plant_sources(scenario)
    client = organizer_of(scenario)
    same = create_study(client, scenario, source_b="support:nist-a")
    assert same.status_code == 400 and "Choose two different sources" in same.content.decode()
    mixed = create_study(client, scenario, source_b="assignment:gpt-secret-assigner")
    assert mixed.status_code == 400 and "of one family" in mixed.content.decode()
    assert not Study.objects.exists()


def test_the_export_says_who_judged_what_and_when(scenario):
    plant_sources(scenario)
    client = organizer_of(scenario)
    create_study(client, scenario)
    work = AssessorWork.objects.get(source__name="s1")
    # The assessor's label counts once the work is submitted: before, the export has the two sources only.
    rows = list(csv.DictReader(io.StringIO(b"".join(client.get(reverse("metaeval:study_csv", args=["s1"]))
                                                    .streaming_content).decode())))  # fmt: skip
    assert len(rows) == 10 and {row["judge"] for row in rows} == {"a", "b"}
    assert {row["made_by"] for row in rows} == {"file:test.jsonl"}
    SupportLabel.objects.create(
        citation_id=work.items[0], method="s1", method_kind="scratch", source=work.source,
        work=work, label=2, created_by=work.assessor, seconds_spent=4.0,
    )  # fmt: skip
    AssessorWork.objects.filter(pk=work.pk).update(status=AssessorWork.Status.SUBMITTED)
    lines = b"".join(client.get(reverse("metaeval:study_jsonl", args=["s1"])).streaming_content).decode().splitlines()
    records = [json.loads(line) for line in lines]
    mine = [r for r in records if r["judge"] == "assessor"]
    assert len(records) == 11 and len(mine) == 1
    assert mine[0]["made_by"] == f"user:{work.assessor.username}" and mine[0]["seconds"] == 4.0
    assert mine[0]["label"] == "FS" and mine[0]["position"] == 1 and mine[0]["source"] == "s1"


def test_an_organizer_gives_a_replicate_on_the_manual_assign_page_and_sees_it_among_the_second_assessors(scenario):
    give_assign(scenario)
    client = organizer_of(scenario)
    second = make_user(Role.ASSESSOR)
    refused = client.post(
        reverse("judge:organize"),
        {"topics": scenario.topic.pk, "assessor": second.pk, "replicate_of": "manual"},
    )
    assert refused.status_code == 400 and "A replicate needs an assigner name" in refused.content.decode()
    given = client.post(
        reverse("judge:organize"),
        {"topics": scenario.topic.pk, "assessor": second.pk, "replicate_of": "manual", "assigner": "manual-2"},
    )
    assert given.status_code == 302
    work = AssessorWork.objects.get(assessor=second)
    assert work.independent and work.source.replicate_of.name == "manual"
    page = client.get(reverse("metaeval:replicates")).content.decode()
    assert "manual-2" in page and "No submitted labels yet" in page


@pytest.mark.parametrize("name", ["metaeval:studies", "metaeval:replicates"])
def test_the_study_pages_are_the_organizers(client, name):
    client.force_login(make_user(Role.ASSESSOR))
    assert client.get(reverse(name)).status_code == 403


def test_an_llm_judges_labels_in_the_export_name_its_endpoint_and_model(scenario):
    plant_sources(scenario)
    job = Job.objects.create(
        kind="auto_support", output_name="nist-b", endpoint_name="local-vllm", model="llama-3.1-70b", status="done"
    )
    # The second source is an LLM's: its labels made by the job (one maker each), its source an LLM's.
    SupportLabel.objects.filter(method="nist-b").update(job=job, imported_from=None)
    LabelSource.objects.filter(family="support", name="nist-b").update(
        kind=LabelSource.Kind.LLM, job=job, endpoint_name=job.endpoint_name, model=job.model
    )  # as assessor.sources records a job's source
    client = organizer_of(scenario)
    create_study(client, scenario)
    lines = b"".join(client.get(reverse("metaeval:study_jsonl", args=["s1"])).streaming_content).decode().splitlines()
    records = [json.loads(line) for line in lines]
    by_judge = {record["judge"]: record for record in records}
    assert (by_judge["b"]["made_by"], by_judge["b"]["endpoint"], by_judge["b"]["model"]) == (
        f"job:{job.pk}", "local-vllm", "llama-3.1-70b",
    )  # fmt: skip
    assert (by_judge["a"]["made_by"], by_judge["a"]["endpoint"], by_judge["a"]["model"]) == ("file:test.jsonl", "", "")
    header = b"".join(client.get(reverse("metaeval:study_csv", args=["s1"])).streaming_content).decode().splitlines()[0]
    assert header.split(",")[-5:] == ["made_by", "endpoint", "model", "at", "seconds"]
    # The comparison of the two sources names the LLM's endpoint and model in taus.csv too.
    taus = client.get(reverse("metaeval:taus_csv"), {"a": "support:nist-a", "b": "support:nist-b", "bootstrap": "0"})
    rows = list(csv.DictReader(io.StringIO(b"".join(taus.streaming_content).decode())))
    assert rows and {(row["b_kind"], row["b_endpoint"], row["b_model"], row["b_job"]) for row in rows} == {
        ("llm", "local-vllm", "llama-3.1-70b", str(job.pk))
    }
    assert {(row["a_kind"], row["a_endpoint"], row["a_model"]) for row in rows} == {("file", "", "")}


def test_a_study_works_sentences_outside_its_sample_say_so_not_that_they_cite_nothing(db):
    # The sample is drawn by the study's seed and the topic's id: a fixed id, not the next of the builders'
    # counter (which follows the tests run before), draws pairs of two answers, each holding a cited sentence
    # outside the sample.
    scenario = make_scenario(topic_id=STUDY_TOPIC)
    plant_sources(scenario)
    create_study(organizer_of(scenario), scenario, k=2)  # two of the five pairs both sources labelled
    work = AssessorWork.objects.get(source__name="s1")
    # Independently: every answer's sentences whose first citation has a passage with text, and the sample's.
    answers = {answer.pk: number for number, answer in enumerate(scenario.answers)}
    cited = {
        (answers[answer_id], index): (pk, bool(text))
        for pk, answer_id, index, text in Citation.objects.filter(
            position=0, sentence__answer_id__in=answers
        ).values_list("pk", "sentence__answer_id", "sentence__index", "segment__text")
    }
    sampled = {key for key, (pk, _) in cited.items() if pk in work.items}
    outside = {key for key, (_, has_text) in cited.items() if has_text and key not in sampled}
    assert len(sampled) == 2 and len(outside) == 3
    reasons = {}
    for number in range(1, len(topic_pairs(work=work).order) + 1):
        page = support_page_load(work=work, number=number)
        for row in page.rows:
            reasons[(answers[row.sentence.answer_id], row.sentence.index)] = row.not_judged
    # The work shows only the answers of sampled pairs: on those, the other cited sentences say why they wait.
    shown = [key for key in outside if key in reasons]
    assert shown, "a sampled answer should hold a cited sentence outside the sample"
    for key in shown:
        assert reasons[key].startswith("its citation is outside the pairs of this work"), key
    for key in sampled:
        assert reasons[key] == "", key
    uncited = [key for key in reasons if key not in cited]
    assert uncited and all(reasons[key] == "cites nothing: counts as no support" for key in uncited)
