"""PrefNugget's preferences by an LLM on the kiddie collection: the job, its command and a re-run."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from assessor.jobs.engine import JobRequestInvalid, job_run_sync
from assessor.models import Job, LabelSource, LLMCall
from preferences.borda import standings
from preferences.llm import preferences_job_create
from preferences.models import PreferenceLabel
from tests.llm_server import Reply
from tests.preferences.expected import PAIRS, expected_labels

pytestmark = pytest.mark.django_db


def stored_labels(name: str) -> dict[tuple[str, str, str], int | None]:
    rows = PreferenceLabel.objects.filter(source__name=name).values_list(
        "topic_id", "first__run__run_id", "second__run__run_id", "label"
    )
    return {(topic, first, second): label for topic, first, second, label in rows}


def test_every_sampled_pair_gets_the_models_preference(llm_server, kiddie):
    job = preferences_job_create(name="prefs")
    assert job.total_items == 5 * 6
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done_items, llm_server.count) == (Job.Status.DONE, 30, 30)
    expected = expected_labels()
    assert stored_labels("prefs") == expected
    assert 0 in expected.values() and {1, 2} <= set(expected.values())  # the collection has ties and wins
    source = LabelSource.objects.get(family="preferences", name="prefs")
    assert (source.kind, source.job_id, source.model) == (LabelSource.Kind.LLM, job.pk, "fake-model")
    label = PreferenceLabel.objects.filter(source=source).first()
    assert label.job_id == job.pk and label.confidence == 0.8 and "request's words" in label.reasoning
    # Borda from the stored labels equals Borda from the expected ones.
    table = standings((t, a, b, label) for (t, a, b), label in stored_labels("prefs").items())
    assert table == standings((t, a, b, label) for (t, a, b), label in expected.items())


def test_a_rerun_under_another_name_calls_nothing(llm_server, kiddie):
    job_run_sync(preferences_job_create(name="first").pk)
    calls = llm_server.count
    again = preferences_job_create(name="second")
    job_run_sync(again.pk)
    assert llm_server.count == calls
    assert stored_labels("second") == stored_labels("first")


def test_must_decide_sends_its_own_prompt_and_has_no_ties(llm_server, kiddie):
    job = preferences_job_create(name="decided", must_decide=True, topics=["bee", "leaf"])
    job_run_sync(job.pk)
    assert job.prompt_versions == {"prefnugget-preference-must-decide": 1}
    expected = {key: label for key, label in expected_labels(must_decide=True).items() if key[0] in ("bee", "leaf")}
    assert stored_labels("decided") == expected and 0 not in expected.values()
    sent = LLMCall.objects.filter(job=job).first()
    assert "select the simplest and clearest" in sent.messages[0]["content"]


def test_an_answer_without_its_section_is_asked_again_and_one_without_a_digit_is_kept_unlabelled(llm_server, kiddie):
    llm_server.script(
        Reply.literal("I prefer the first."),
        Reply.literal(
            "[[ ## reasoning ## ]]\nHm.\n\n[[ ## better_passage ## ]]\nneither\n\n[[ ## confidence ## ]]\n0.5"
        ),
    )
    job = preferences_job_create(name="odd", topics=["bee"], runs=["run1", "run2"])
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.done_items, job.failed_items, llm_server.count) == (1, 0, 2)
    assert stored_labels("odd") == {("bee", "run1", "run2"): None}


def test_run_preferences_dry_run_prints_the_pairs_and_calls_nothing(llm_server, kiddie):
    out = StringIO()
    call_command("run_preferences", "--dry-run", "--topics", "leaf", "bee", stdout=out)
    assert out.getvalue().splitlines() == [f"{topic}\t{a}\t{b}" for topic in ("bee", "leaf") for a, b in PAIRS]
    assert (Job.objects.count(), LabelSource.objects.count(), llm_server.count) == (0, 0, 0)
    with pytest.raises(CommandError, match="unknown topic"):
        call_command("run_preferences", "--dry-run", "--topics", "nope", stdout=out)


def test_run_preferences_makes_the_job_with_its_options(llm_server, kiddie):
    out = StringIO()
    call_command("run_preferences", "--name", "cmd", "--runs", "run1", "run3", "--sync", "--threads", "1", stdout=out)
    job = Job.objects.get(output_name="cmd")
    assert job.params == {"runs": ["run1", "run3"], "topics": [], "must_decide": False, "queue": ""}
    assert f"job {job.pk} done: 5/5 items" in out.getvalue()
    with pytest.raises(JobRequestInvalid, match="already produces 'cmd'"):
        preferences_job_create(name="cmd")
