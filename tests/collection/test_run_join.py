"""Joining two runs into one: answers move with their labels, the old id stays as an alias."""

import html
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from assessor.collection.importing.runs import run_import
from assessor.collection.run_join import RunJoinRefused, runs_join
from assessor.collection.runs import RunResolver
from assessor.models import Answer, Run, RunAlias, Topic
from assessor.work.roles import Role
from assignment.importing import assignments_import
from assignment.models import AssignmentLabel
from metaeval.importing import scores_import
from metaeval.selectors import score_table_scores
from support.importing import support_import
from support.models import SupportLabel
from tests.builders import (
    make_answer,
    make_assignment_label,
    make_nugget_set,
    make_run,
    make_segment,
    make_support_label,
    make_topic,
    make_user,
    nuggets_of,
)

pytestmark = pytest.mark.django_db

# The real case: one team's run, named one way in the nugget assignment file and another in the support file.
KEEP = "webis.webis-manual"
MERGE = "webis-manual-manual"


@pytest.fixture
def split_run():
    """KEEP answers topic 2024-1, MERGE answers 2024-2 and 2024-3; MERGE's answers carry labels."""
    topics = [make_topic("2024-1"), make_topic("2024-2"), make_topic("2024-3")]
    segment = make_segment("doc_a#0_0")
    keep, merge = make_run(KEEP), make_run(MERGE)
    make_answer(keep, topics[0], [("Kept answer.", [segment])])
    moved = [make_answer(merge, topic, [("Answer of the other half.", [segment])]) for topic in topics[1:]]
    nugget = nuggets_of(make_nugget_set(topics[1]))[0]
    make_assignment_label(moved[0], nugget, "support")
    make_support_label(moved[1], 0, 2)
    return keep, merge


def answers_by_run() -> set[tuple[str, str]]:
    return set(Answer.objects.values_list("run__run_id", "topic_id"))


# --- the service -----------------------------------------------------------------------------


def test_a_join_moves_the_answers_and_their_labels_follow(split_run):
    organizer = make_user(Role.ORGANIZER)
    result = runs_join(keep=KEEP, merge=MERGE, by=organizer)

    assert answers_by_run() == {(KEEP, "2024-1"), (KEEP, "2024-2"), (KEEP, "2024-3")}
    assert result.topics == ["2024-2", "2024-3"]
    assert list(Run.objects.values_list("run_id", flat=True)) == [KEEP]
    label = AssignmentLabel.objects.get()
    assert (label.answer.run.run_id, label.answer.topic_id, label.label) == (KEEP, "2024-2", "support")
    support = SupportLabel.objects.get()
    assert (support.citation.sentence.answer.run.run_id, support.citation.sentence.answer.topic_id) == (KEEP, "2024-3")
    alias = RunAlias.objects.get()
    assert (alias.alias, alias.run.run_id, alias.joined_from, alias.answers_moved) == (MERGE, KEEP, MERGE, 2)
    assert alias.created_by == organizer


def test_runs_that_both_answer_a_topic_are_refused_naming_it_and_nothing_changes(split_run):
    keep, _ = split_run
    make_answer(keep, Answer.objects.get(topic_id="2024-3").topic)
    before = (answers_by_run(), set(Run.objects.values_list("run_id", flat=True)), RunAlias.objects.count())

    with pytest.raises(RunJoinRefused, match="2024-3") as refusal:
        runs_join(keep=KEEP, merge=MERGE, by=None)

    assert "2024-2" not in str(refusal.value)
    assert (answers_by_run(), set(Run.objects.values_list("run_id", flat=True)), RunAlias.objects.count()) == before


def test_a_run_is_not_joined_with_itself_or_an_unknown_run(split_run):
    with pytest.raises(RunJoinRefused, match="same run"):
        runs_join(keep=KEEP, merge="webis-manual", by=None)  # the team-prefix rule names KEEP
    with pytest.raises(RunJoinRefused, match="no run 'nobody'"):
        runs_join(keep=KEEP, merge="nobody", by=None)
    assert Run.objects.count() == 2


def test_a_later_run_file_naming_the_old_id_lands_on_the_joined_run(split_run, write_file):
    runs_join(keep=KEEP, merge=MERGE, by=None)
    make_topic("2024-4", query="a fourth topic")
    record = {
        "run_id": MERGE,
        "topic_id": "2024-4",
        "topic": "a fourth topic",
        "references": ["doc_a#0_0"],
        "answer": [{"text": "A new answer.", "citations": [0]}],
    }
    run_import(path=write_file("run.jsonl", json.dumps(record) + "\n"))

    assert list(Run.objects.values_list("run_id", flat=True)) == [KEEP]
    assert (KEEP, "2024-4") in answers_by_run()


def test_a_later_assignment_file_naming_the_old_id_labels_the_moved_answer(split_run, write_file):
    runs_join(keep=KEEP, merge=MERGE, by=None)
    line = {
        "query": "what is a nugget",
        "qid": "2024-2",
        "run_id": MERGE,
        "answer_text": "Answer of the other half.",
        "response_length": 5,
        "nuggets": [{"text": "Bees see", "importance": "vital", "assignment": "partial_support"}],
    }
    assignments_import(path=write_file("assigned.jsonl", json.dumps(line) + "\n"), nuggets="manual", assigner="manual")

    assert list(Run.objects.values_list("run_id", flat=True)) == [KEEP]
    imported = AssignmentLabel.objects.get(nugget__nugget_set__name="manual")
    assert (imported.answer.run.run_id, imported.answer.topic_id, imported.label) == (KEEP, "2024-2", "partial_support")


def test_a_team_prefixed_form_of_an_alias_resolves_to_its_run(split_run):
    runs_join(keep=KEEP, merge=MERGE, by=None)
    resolved = RunResolver().find("webis.webis-manual-manual")
    assert resolved is not None and resolved.run_id == KEEP


def test_joining_the_joined_run_re_points_its_aliases(split_run, write_file):
    third = make_run("third")
    make_answer(third, make_topic("2024-5", query="a fifth topic"))
    runs_join(keep=KEEP, merge=MERGE, by=None)
    result = runs_join(keep="third", merge=KEEP, by=None)

    assert result.repointed == [MERGE]
    assert dict(RunAlias.objects.values_list("alias", "run__run_id")) == {MERGE: "third", KEEP: "third"}
    assert {run for run, _ in answers_by_run()} == {"third"}
    assert len(answers_by_run()) == 4
    # A file naming the first id lands on the last run, in one step.
    record = {"run_id": MERGE, "topic_id": "2024-6", "topic": "six", "references": [], "answer": []}
    make_topic("2024-6", query="six")
    run_import(path=write_file("run.jsonl", json.dumps(record) + "\n"))
    assert list(Run.objects.values_list("run_id", flat=True)) == ["third"]


def test_a_score_table_naming_both_halves_scores_the_joined_run(split_run, write_file):
    tsv = (
        "run_id\ttopic_id\tmetric\tvalue\n"
        f"{KEEP}\t2024-1\tVstrict\t0.9\n{KEEP}\tall\tVstrict\t0.9\n"
        f"{MERGE}\t2024-2\tVstrict\t0.3\n{MERGE}\t2024-3\tVstrict\t0.0\n{MERGE}\tall\tVstrict\t0.15\n"
    )
    scores_import(path=write_file("scores.tsv", tsv), name="official")
    runs_join(keep=KEEP, merge=MERGE, by=None)

    scores = score_table_scores(name="official")
    assert scores.runs == [KEEP]
    assert scores.per_topic[(KEEP, "2024-2")]["Vstrict"] == 0.3
    # Neither half's `all` row is the joined run's mean: it is (0.9 + 0.3 + 0.0) / 3.
    assert scores.run_means[KEEP]["Vstrict"] == pytest.approx(0.4)


# --- the command -----------------------------------------------------------------------------


def test_the_command_prints_what_moved_and_the_alias(split_run, capsys):
    call_command("join_runs", KEEP, MERGE)
    out = capsys.readouterr().out
    assert "answers moved: 2" in out
    assert "topic 2024-2: 1 answer" in out and "topic 2024-3: 1 answer" in out
    assert f"alias created: {MERGE} -> {KEEP}" in out
    assert answers_by_run() == {(KEEP, "2024-1"), (KEEP, "2024-2"), (KEEP, "2024-3")}


def test_the_command_fails_naming_the_conflict(split_run):
    make_answer(Run.objects.get(run_id=MERGE), Answer.objects.get(run__run_id=KEEP).topic)
    with pytest.raises(CommandError, match="2024-1"):
        call_command("join_runs", KEEP, MERGE)
    assert Run.objects.count() == 2 and not RunAlias.objects.exists()


# --- the run page ----------------------------------------------------------------------------


def join_url() -> str:
    return reverse("collection:run_join", args=[KEEP])


def test_the_run_page_offers_the_join_with_the_known_ids(split_run, organizer):
    page = organizer.get(reverse("collection:run", args=[KEEP])).content.decode()
    assert "Join another run into this one" in page
    assert f'<option value="{MERGE}">' in page
    assert f'<option value="{KEEP}">' not in page


def test_the_page_shows_what_will_move_then_joins_and_lists_the_alias(split_run, organizer):
    review = organizer.get(join_url(), {"merge": MERGE})
    assert review.status_code == 200
    text = review.content.decode()
    assert "2024-2, 2024-3" in text and "Answers moving" in text
    assert Run.objects.count() == 2  # a review changes nothing

    done = organizer.post(join_url(), {"merge": MERGE}, follow=True)
    assert done.status_code == 200
    page = done.content.decode()
    assert f"Joined run {MERGE} into {KEEP}: 2 answer(s) moved" in page
    assert 'id="run-aliases"' in page and MERGE in page
    assert list(Run.objects.values_list("run_id", flat=True)) == [KEEP]
    assert RunAlias.objects.get().created_by.groups.get().name == Role.ORGANIZER


def test_the_page_asks_whose_answer_a_topic_both_answer_keeps_and_refuses_without_a_choice(split_run, organizer):
    make_answer(Run.objects.get(run_id=MERGE), Answer.objects.get(run__run_id=KEEP).topic, [("Another.", [])])
    review = organizer.get(join_url(), {"merge": MERGE})
    assert review.status_code == 200
    text = html.unescape(review.content.decode())
    assert "Topics both runs answer differently" in text and "their texts differ" in text
    assert f'name="answer-2024-1" value="{KEEP}" required' in text and f'name="answer-2024-1" value="{MERGE}"' in text
    refused = organizer.post(join_url(), {"merge": MERGE})
    assert refused.status_code == 409 and "both answer topic(s) 2024-1 with different answers" in html.unescape(
        refused.content.decode()
    )
    assert Run.objects.count() == 2
    done = organizer.post(join_url(), {"merge": MERGE, "answer-2024-1": MERGE}, follow=True)
    assert f"answers set aside in the history (2024-1: {KEEP}&#x27;s)" in done.content.decode()
    assert Answer.objects.get(topic_id="2024-1").text == "Another."


def test_the_old_id_opens_the_joined_run_page(split_run, organizer):
    runs_join(keep=KEEP, merge=MERGE, by=None)
    response = organizer.get(reverse("collection:run", args=[MERGE]))
    assert response.status_code == 302 and response["Location"] == reverse("collection:run", args=[KEEP])


def test_an_assessor_may_not_join_runs(split_run, client):
    client.force_login(make_user(Role.ASSESSOR))
    assert client.get(join_url(), {"merge": MERGE}).status_code == 403
    assert client.post(join_url(), {"merge": MERGE}).status_code == 403
    assert Run.objects.count() == 2


# --- topics both runs answer -----------------------------------------------------------------


def test_one_answer_imported_twice_is_combined_with_the_labels_of_both(split_run):
    """The real case: the nugget file gave the answer's text (with nugget labels), a support file its
    sentences (with support labels); both halves answer topic 2024-4 with that one answer."""
    keep, merge = split_run
    topic, segment = make_topic("2024-4"), make_segment("doc_b#0_0")
    with_sentences = make_answer(keep, topic, [("First sentence.", [segment]), ("Second  one.", [])])
    make_support_label(with_sentences, 0, 1)
    text_only = Answer.objects.create(run=merge, topic=topic, text="First sentence. Second one.", words=4)
    nugget = nuggets_of(make_nugget_set(topic))[0]
    make_assignment_label(text_only, nugget, "partial_support")

    result = runs_join(keep=KEEP, merge=MERGE, by=None)
    assert result.combined == ["2024-4"] and result.set_aside == {}
    answer = Answer.objects.get(topic=topic)
    assert (answer.pk, answer.run.run_id) == (with_sentences.pk, KEEP)
    assert list(answer.sentences.values_list("text", flat=True)) == ["First sentence.", "Second  one."]
    assert AssignmentLabel.objects.get(nugget=nugget).answer_id == answer.pk
    assert SupportLabel.objects.get(citation__sentence__answer=answer).label == 1
    assert not Answer.objects.filter(pk=text_only.pk).exists()


def test_the_answer_with_sentences_stays_when_it_is_the_merged_runs(split_run):
    keep, merge = split_run
    topic = make_topic("2024-4")
    text_only = Answer.objects.create(run=keep, topic=topic, text="One sentence.", words=2)
    make_assignment_label(text_only, nuggets_of(make_nugget_set(topic))[0], "support")
    with_sentences = make_answer(merge, topic, [("One sentence.", [])])
    runs_join(keep=KEEP, merge=MERGE, by=None)
    answer = Answer.objects.get(topic=topic)
    assert (answer.pk, answer.run.run_id, answer.assignment_labels.count()) == (with_sentences.pk, KEEP, 1)


def test_different_answers_need_a_choice_and_the_other_is_set_aside_with_its_labels(split_run, capsys):
    keep, merge = split_run
    topic, segment = make_topic("2024-4"), make_segment("doc_b#0_0")
    kept = make_answer(keep, topic, [("The kept answer.", [segment])])
    make_support_label(kept, 0, 2)
    other = make_answer(merge, topic, [("The other answer.", [segment])])
    make_support_label(other, 0, 0, method="llm", kind="auto")
    # Same text, but sentences on both sides: not one answer imported twice either.
    same_text = make_topic("2024-5")
    make_answer(keep, same_text, [("Same.", [])])
    make_answer(merge, same_text, [("Same.", [])])

    with pytest.raises(CommandError, match=r"both answer topic\(s\) 2024-4, 2024-5 with different answers"):
        call_command("join_runs", KEEP, MERGE)
    make_run("third")
    with pytest.raises(CommandError, match="no run 'nobody'"):
        call_command("join_runs", KEEP, MERGE, "--answer", "2024-4=nobody", "--answer", "2024-5=" + KEEP)
    with pytest.raises(CommandError, match=r"2024-4 must be webis.webis-manual's or webis-manual-manual's"):
        call_command("join_runs", KEEP, MERGE, "--answer", "2024-4=third", "--answer", "2024-5=" + KEEP)
    assert Run.objects.count() == 3 and not RunAlias.objects.exists()

    call_command("join_runs", KEEP, MERGE, "--answer", f"2024-4={KEEP}", "--answer", f"2024-5={MERGE}")
    out = capsys.readouterr().out
    assert f"topic 2024-4: {MERGE}'s answer set aside in the join's history" in out
    assert f"topic 2024-5: {KEEP}'s answer set aside in the join's history" in out
    assert Answer.objects.get(topic=topic).pk == kept.pk
    assert SupportLabel.objects.get(citation__sentence__answer__topic=topic).label == 2
    history = {entry["topic"]: entry for entry in RunAlias.objects.get().set_aside}
    assert (history["2024-4"]["run"], history["2024-4"]["text"]) == (MERGE, "The other answer.")
    rows = {row["model"] for row in history["2024-4"]["rows"]}
    assert rows == {"assessor.answer", "assessor.sentence", "assessor.citation", "assessor.answerreference",
                    "support.supportlabel"}  # fmt: skip
    label = next(row for row in history["2024-4"]["rows"] if row["model"] == "support.supportlabel")
    assert (label["fields"]["method"], label["fields"]["label"]) == ("llm", 0)


def test_the_real_split_run_joins_combining_the_three_topics_both_files_answer(write_file, shared_data):
    """In TREC 2024 the support files name the run webis.webis-manual (topics 2024-32912, 2024-41849,
    2024-153051, 2024-224701, 2024-79154), the nugget file webis-manual-manual (2024-153051, 2024-224701,
    2024-27366, 2024-79154): the three topics of both carry the same answer text."""
    shared = shared_data
    lines = {}
    for name in ("final.citation_judgments_without_prediction.20241025.jsonl",
                 "final.citation_judgments_with_prediction.20241025.jsonl", "nugget_assignment.20241108.jl"):  # fmt: skip
        with open(shared / name) as f:
            lines[name] = [line for line in f if '"webis.webis-manual"' in line or '"webis-manual-manual"' in line]
    for line in [line for chunk in lines.values() for line in chunk]:
        record = json.loads(line)
        topic_id = record.get("topic_id") or record.get("qid")
        if not Topic.objects.filter(pk=topic_id).exists():
            make_topic(topic_id, query=record.get("query", "q"))
    support_lines = lines["final.citation_judgments_without_prediction.20241025.jsonl"] + lines[
        "final.citation_judgments_with_prediction.20241025.jsonl"
    ]
    support_import(path=write_file("support.jsonl", "".join(support_lines)), method="scratch", method_name="nist-support")
    assignments_import(
        path=write_file("assign.jsonl", "".join(lines["nugget_assignment.20241108.jl"])), nuggets="auto_edit",
        nuggets_name="nist", assigner="manual", assigner_name="nist",
    )  # fmt: skip
    assert set(Run.objects.values_list("run_id", flat=True)) == {"webis.webis-manual", "webis-manual-manual"}

    result = runs_join(keep="webis.webis-manual", merge="webis-manual-manual", by=None)
    assert result.combined == ["2024-153051", "2024-224701", "2024-79154"]
    assert (result.topics, result.set_aside) == (["2024-27366"], {})
    answers = Answer.objects.filter(run__run_id="webis.webis-manual")
    assert answers.count() == 6
    # Every combined answer has its sentences (support file) and its nugget labels (nugget file).
    for topic in result.combined:
        answer = answers.get(topic_id=topic)
        assert answer.sentences.exists() and answer.assignment_labels.exists(), topic
