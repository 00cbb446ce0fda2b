"""A grade's answer read as the reference reads it, through the LLM client against the fake server: what the
reference's adapter refuses is asked again with the reason, what it tolerates is read as it reads it."""

import pytest

from assessor.jobs.engine import job_run_sync
from assessor.models import LLMCall
from grades.llm import grades_job_create
from grades.models import GradeLabel
from tests.grades.conftest import BANK
from tests.llm_server import Reply

pytestmark = pytest.mark.django_db


def graded(value: str, *, confidence: str = "0.9") -> str:
    return f"[[ ## reasoning ## ]]\nRead.\n\n[[ ## grade ## ]]\n{value}\n\n[[ ## confidence ## ]]\n{confidence}"


def test_an_answer_the_reference_adapter_refuses_is_asked_again_with_the_reason(llm_server, qbank):
    tolerant = (
        "[[ ##Reasoning## ]] It says how. [[ ## GRADE ## ]] 2\n\n[[ ## grade ## ]]\nNone\n"
        "[[ ## grade ## ]] 4/5\n[[## Confidence ##]]\n0.75 as far as I can tell"
    )
    llm_server.script(
        Reply.literal(graded("NULL")),  # a grade saying null: missing
        Reply.literal(graded("3", confidence="high")),  # no number in the confidence
        Reply.literal(tolerant),
    )
    job = grades_job_create(name="odd", bank="qbank", topics=["bee"], runs=["run1"])
    job_run_sync(job.pk, threads=1)
    job.refresh_from_db()
    assert (job.done_items, job.failed_items, llm_server.count) == (2, 0, 3 + 1)  # then the second question
    first = GradeLabel.objects.get(source__name="odd", nugget__text=BANK["bee"][0])
    # The last grade that says something (4/5: 4); the confidence's first number.
    assert (first.label, first.confidence, first.reasoning) == (4, 0.75, "It says how.")
    calls = list(LLMCall.objects.filter(job=job).order_by("pk"))[:3]
    assert [call.parsed_ok for call in calls] == [False, False, True]
    assert "no value in [[ ## grade ## ]]" in calls[0].error
    assert "[[ ## confidence ## ]] section: 'high' is not a number" in calls[1].error
    assert calls[2].messages[-1]["content"].startswith("Your answer could not be used: the [[ ## confidence")


def test_an_answer_refused_at_every_ask_fails_its_item_and_stores_no_grade(llm_server, qbank):
    llm_server.script(*[Reply.literal(graded("4").replace("[[ ## reasoning ## ]]\nRead.\n\n", ""))] * 3)
    job = grades_job_create(name="odd", bank="qbank", topics=["bee"], runs=["run1"])
    job_run_sync(job.pk, threads=1)
    job.refresh_from_db()
    assert (job.done_items, job.failed_items) == (1, 1)
    assert "[[ ## reasoning ## ]]" in job.items.get(status="failed").error
    assert GradeLabel.objects.filter(source__name="odd").count() == 1
