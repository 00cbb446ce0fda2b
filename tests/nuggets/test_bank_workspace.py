"""Question banks in the nugget workspace: given from scratch or to post-edit an LLM's bank; questions with
their rule and gold answers (documents picked from the topic's), carried by merge, split and undo; caps,
submit, the edit log, replays and the page."""

import pytest
from django.urls import reverse

from assessor.models import AssessorWork
from assessor.work.roles import Role
from assessor.work.services import WorkError
from nuggets import workspace as rules
from nuggets.banks import Answer, Question, bank_questions, bank_store
from nuggets.giving import nugget_work_give
from nuggets.kinds import BANK_AUTO_EDIT, BANK_MANUAL, LABEL_FAMILY
from nuggets.models import GoldAnswer, NuggetEdit, NuggetSet
from nuggets.selectors import edit_describe
from nuggets.services import nugget_operation_apply, nugget_set_reopen, nugget_set_submit
from tests.builders import make_answer, make_batch, make_run, make_segment, make_topic, make_user, source_of
from tests.scenarios import make_relevant_segments, nugget_set_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def topic():
    topic = make_topic("t1", "why is the sky blue")
    make_relevant_segments(topic, [2, 0])  # two qrels' segments, one judged irrelevant: both are the topic's
    cited = make_segment("cited-doc", "A report cites this document.")
    make_answer(make_run("run-a"), topic, [("The sky scatters blue light.", [cited])])
    make_segment("elsewhere", "No qrel and no citation: not this topic's.")
    return topic


def docs(topic) -> list[str]:
    return sorted(topic.qrels.values_list("segment_id", flat=True))


def give(topic, condition="manual", **kw):
    return nugget_work_give(
        topic=topic, assessor=make_user(), condition=condition, by=make_user(Role.ORGANIZER), form="questions", **kw
    )


def apply(work, operation, **params):
    version = nugget_set_of(work).version
    return nugget_operation_apply(
        work_id=work.pk, user=work.assessor, operation=operation, params=params, expected_version=version
    )


def bank_of(work) -> list[Question]:
    return bank_questions(work.nugget_set_name, counted=False)[work.topic_id]


def ids_of(work) -> list[int]:
    return list(nugget_set_of(work).nuggets.order_by("position").values_list("id", flat=True))


def test_a_bank_given_from_scratch_is_an_open_set_of_questions_and_no_condition(topic):
    work = give(topic)
    nugget_set = nugget_set_of(work)
    assert (work.kind, work.nugget_set_name) == (BANK_MANUAL, "bank")
    assert (nugget_set.form, nugget_set.kind, nugget_set.status) == ("questions", "manual", "open")


def test_questions_take_answers_with_the_topics_documents_and_a_rule(topic):
    work = give(topic)
    first, second = docs(topic)
    question = apply(work, "add", text="Why is the sky blue?").focus_id
    apply(work, "answer_add", nugget=question, answer_text="Rayleigh scattering", documents=f"{first} cited-doc")
    apply(work, "answer_add", nugget=question, answer_text="Short waves scatter", documents=second)
    apply(work, "rule", nugget=question, rule="and")
    apply(work, "importance", nugget=question, importance="vital")
    assert bank_of(work) == [
        Question(
            text="Why is the sky blue?",
            importance="vital",
            rule="and",
            answers=(Answer("Rayleigh scattering", (first, "cited-doc")), Answer("Short waves scatter", (second,))),
        )
    ]
    with pytest.raises(rules.InvalidOperation, match="elsewhere"):
        apply(work, "answer_add", nugget=question, answer_text="Other", documents="elsewhere")
    apply(work, "answer_edit", nugget=question, answer="1", answer_text="Short waves scatter more", documents="")
    apply(work, "answer_delete", nugget=question, answer="0")
    assert bank_of(work)[0].answers == (Answer("Short waves scatter more"),)


def test_the_first_answer_makes_the_rule_or_and_submit_needs_no_importance(topic):
    work = give(topic)
    question = apply(work, "add", text="Why?").focus_id
    apply(work, "add", text="Open-ended: what else?")
    apply(work, "answer_add", nugget=question, answer_text="Because", documents="cited-doc")
    assert [q.rule for q in bank_of(work)] == ["or", ""]
    assert bank_questions("bank") == {}  # open work counts for nothing
    result = nugget_set_submit(work_id=work.pk, user=work.assessor, expected_version=nugget_set_of(work).version)
    assert result.nugget_set.status == NuggetSet.Status.SUBMITTED
    assert AssessorWork.objects.get(pk=work.pk).status == AssessorWork.Status.SUBMITTED
    assert list(bank_questions("bank")) == ["t1"]


def test_two_answers_without_a_rule_keep_the_bank_from_being_submitted():
    assert rules.bank_submit_problems(questions=[(0, "", 2), (1, "", 1), (2, "or", 3)], cap=20) == [
        "Say how the answers combine (OR or AND) on question 1."
    ]
    assert rules.bank_submit_problems(questions=[], cap=20) == ["The bank is empty: write at least one question."]


def test_merge_keeps_the_answers_of_both_in_order_and_undo_restores_them(topic):
    work = give(topic)
    a = apply(work, "add", text="A?").focus_id
    b = apply(work, "add", text="B?").focus_id
    apply(work, "answer_add", nugget=a, answer_text="a1", documents="cited-doc")
    apply(work, "answer_add", nugget=b, answer_text="b1")
    apply(work, "rule", nugget=b, rule="and")
    apply(work, "answer_add", nugget=b, answer_text="a1", documents=docs(topic)[0])
    before = bank_of(work)
    apply(work, "merge", nuggets=f"{b},{a}", text="A or B?")
    # In list order: A's answers, then B's; a text met again adds its documents; the first rule given.
    assert bank_of(work) == [
        Question(
            text="A or B?",
            rule="or",
            answers=(Answer("a1", ("cited-doc", docs(topic)[0])), Answer("b1")),
        )
    ]
    apply(work, "undo")
    assert bank_of(work) == before


def test_split_leaves_the_answers_and_rule_with_the_first_part(topic):
    work = give(topic)
    question = apply(work, "add", text="Why and when?").focus_id
    apply(work, "answer_add", nugget=question, answer_text="Scattering", documents="cited-doc")
    apply(work, "split", nugget=question, texts="Why?\nWhen?")
    assert bank_of(work) == [
        Question(text="Why?", rule="or", answers=(Answer("Scattering", ("cited-doc",)),)),
        Question(text="When?"),
    ]
    apply(work, "undo")
    assert bank_of(work) == [Question(text="Why and when?", rule="or", answers=(Answer("Scattering", ("cited-doc",)),))]


def test_undo_takes_back_an_answer_change(topic):
    work = give(topic)
    question = apply(work, "add", text="Why?").focus_id
    apply(work, "answer_add", nugget=question, answer_text="Because", documents="cited-doc")
    apply(work, "answer_delete", nugget=question, answer="0")
    assert bank_of(work)[0].answers == ()
    apply(work, "undo")
    assert bank_of(work)[0].answers == (Answer("Because", ("cited-doc",)),)


def test_the_edit_log_says_what_became_of_the_answers(topic):
    work = give(topic)
    question = apply(work, "add", text="Why?").focus_id
    apply(work, "answer_add", nugget=question, answer_text="Because", documents="cited-doc")
    apply(work, "rule", nugget=question, rule="and")
    apply(work, "answer_delete", nugget=question, answer="0")
    log = [edit_describe(edit) for edit in NuggetEdit.objects.filter(nugget_set=nugget_set_of(work)).order_by("id")]
    assert log[1:] == [
        "“Why?”: answer + “Because” (cited-doc)",
        "“Why?”: rule OR → AND",
        "“Why?”: answer − “Because”",
    ]


def test_a_replayed_answer_is_added_once(topic):
    work = give(topic)
    question = apply(work, "add", text="Why?").focus_id
    version = nugget_set_of(work).version
    params = {"nugget": question, "answer_text": "Because", "documents": "cited-doc"}
    for _ in range(2):
        nugget_operation_apply(
            work_id=work.pk, user=work.assessor, operation="answer_add", params=params, expected_version=version,
            op_id="op-1",
        )  # fmt: skip
    assert GoldAnswer.objects.filter(nugget_id=question).count() == 1


def test_caps_twenty_questions_from_scratch_and_ten_answers_a_question(topic):
    work = give(topic)
    for number in range(20):
        apply(work, "add", text=f"Question {number}?")
    with pytest.raises(rules.CapReached, match="Question bank allows at most 20 questions"):
        apply(work, "add", text="One too many?")
    question = ids_of(work)[0]
    for number in range(10):
        apply(work, "answer_add", nugget=question, answer_text=f"answer {number}")
    with pytest.raises(rules.CapReached):
        apply(work, "answer_add", nugget=question, answer_text="answer 10")


def llm_bank(topic, size=3, kind=NuggetSet.Kind.AUTO):
    questions = [
        Question(
            text=f"LLM question {i}?", importance="okay", rule="or", answers=(Answer(f"answer {i}", ("cited-doc",)),)
        )
        for i in range(size)
    ]
    return bank_store(
        topic_id=topic.pk, name="llm", questions=questions, source=source_of(LABEL_FAMILY, "llm"), kind=kind,
        imported_from=make_batch(),
    )  # fmt: skip


def test_post_editing_starts_from_a_copy_of_the_llm_bank_with_its_answers_kept(topic):
    llm = llm_bank(topic)
    work = give(topic, condition="auto_edit")
    nugget_set = nugget_set_of(work)
    assert (work.kind, nugget_set.kind, nugget_set.drafts_id) == (BANK_AUTO_EDIT, "auto_edit", llm.pk)
    assert bank_of(work) == bank_questions("llm")["t1"]
    assert set(nugget_set.nuggets.values_list("origin", flat=True)) == {"kept"}
    copies = list(nugget_set.nuggets.order_by("position"))
    assert [list(c.derived_from.values_list("pk", flat=True)) for c in copies] == [
        [pk] for pk in llm.nuggets.order_by("position").values_list("pk", flat=True)
    ]
    apply(work, "edit", nugget=copies[0].pk, text="Reworded question?")
    assert nugget_set_of(work).nuggets.get(pk=copies[0].pk).origin == "reworded"


def test_a_post_edited_bank_holds_thirty_and_is_submitted_with_twenty(topic):
    llm_bank(topic, size=25)
    work = give(topic, condition="auto_edit")
    version = nugget_set_of(work).version
    with pytest.raises(rules.InvalidOperation, match="At most 20 questions"):
        nugget_set_submit(work_id=work.pk, user=work.assessor, expected_version=version)


def test_post_editing_needs_an_llm_bank_and_fact_drafts_are_not_one(topic):
    with pytest.raises(WorkError, match="no LLM question bank"):
        give(topic, condition="auto_edit")


def test_the_page_shows_the_question_form_and_takes_an_answer(client, topic):
    work = give(topic)
    question = apply(work, "add", text="Why is the sky blue?").focus_id
    client.force_login(work.assessor)
    page = client.get(reverse("nuggets:work", args=[work.pk])).content.decode()
    assert 'id="answer-form"' in page and 'value="cited-doc"' in page and "A report cites this document." in page
    assert 'value="elsewhere"' not in page
    assert "gives <strong>any</strong> of its answers" in page and "Submit the questions of topic t1?" in page
    response = client.post(
        reverse("nuggets:op", args=[work.pk, "answer_add"]),
        {"version": nugget_set_of(work).version, "nugget": question, "answer_text": "Scattering",
         "documents": ["cited-doc", docs(topic)[0]]},
    )  # fmt: skip
    assert response.status_code == 302
    assert bank_of(work)[0].answers == (Answer("Scattering", ("cited-doc", docs(topic)[0])),)
    page = client.get(reverse("nuggets:work", args=[work.pk])).content.decode()
    assert "Scattering" in page and "rule-or on" in page


def test_the_give_page_gives_a_bank_and_the_topic_report_shows_its_work(client, topic):
    llm_bank(topic)
    organizer, assessor = make_user(Role.ORGANIZER), make_user()
    client.force_login(organizer)
    fields = {"topics": topic.pk, "assessor": assessor.pk, "condition": "bank_auto_edit"}
    response = client.post(reverse("nuggets:organize"), fields, follow=True)
    assert "Question bank (post-editing an LLM&#x27;s bank)" in response.content.decode()
    work = AssessorWork.objects.get()
    assert (work.kind, nugget_set_of(work).form) == (BANK_AUTO_EDIT, "questions")
    assert "Question bank post-edit" in response.content.decode()
    report = client.get(reverse("nuggets:organize_topic", args=[topic.pk])).content.decode()
    assert "LLM question 0?" in report and 'answer 0 <span class="muted">(cited-doc)</span>' in report


def test_an_answer_cites_at_most_twenty_documents(topic):
    many = [make_segment(f"doc-{i}") for i in range(21)]
    make_answer(make_run("run-b"), topic, [("Many citations.", many)])
    work = give(topic)
    question = apply(work, "add", text="Why?").focus_id
    apply(work, "answer_add", nugget=question, answer_text="Twenty", documents=" ".join(s.pk for s in many[:20]))
    assert len(bank_of(work)[0].answers[0].documents) == 20
    with pytest.raises(rules.InvalidOperation, match="at most 20 documents"):
        apply(work, "answer_add", nugget=question, answer_text="More", documents=" ".join(s.pk for s in many))


def test_a_submitted_bank_is_reopened_edited_and_submitted_again(topic):
    work = give(topic)
    question = apply(work, "add", text="Why?").focus_id
    nugget_set_submit(work_id=work.pk, user=work.assessor, expected_version=nugget_set_of(work).version)
    with pytest.raises(rules.SetFrozen):
        apply(work, "answer_add", nugget=question, answer_text="Because")
    nugget_set_reopen(work_id=work.pk, by=make_user(Role.ORGANIZER), reason="add the answer")
    assert bank_questions("bank") == {}
    apply(work, "answer_add", nugget=question, answer_text="Because", documents="cited-doc")
    nugget_set_submit(work_id=work.pk, user=work.assessor, expected_version=nugget_set_of(work).version)
    assert bank_questions("bank") == {
        "t1": [Question(text="Why?", rule="or", answers=(Answer("Because", ("cited-doc",)),))]
    }
