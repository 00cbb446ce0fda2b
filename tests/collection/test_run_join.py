"""Joining two runs into one: answers move with their labels, the old id stays as an alias."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from assessor.collection.importing.runs import run_import
from assessor.collection.run_join import RunJoinRefused, runs_join
from assessor.collection.runs import RunResolver
from assessor.models import Answer, Run, RunAlias
from assessor.work.roles import Role
from assignment.importing import assignments_import
from assignment.models import AssignmentLabel
from metaeval.importing import scores_import
from metaeval.selectors import score_table_scores
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


def test_the_page_refuses_a_conflict_naming_the_topic(split_run, organizer):
    make_answer(Run.objects.get(run_id=MERGE), Answer.objects.get(run__run_id=KEEP).topic)
    review = organizer.get(join_url(), {"merge": MERGE})
    assert review.status_code == 409
    assert "2024-1" in review.content.decode() and "Join webis" not in review.content.decode()
    refused = organizer.post(join_url(), {"merge": MERGE})
    assert refused.status_code == 409 and "2024-1" in refused.content.decode()
    assert Run.objects.count() == 2


def test_the_old_id_opens_the_joined_run_page(split_run, organizer):
    runs_join(keep=KEEP, merge=MERGE, by=None)
    response = organizer.get(reverse("collection:run", args=[MERGE]))
    assert response.status_code == 302 and response["Location"] == reverse("collection:run", args=[KEEP])


def test_an_assessor_may_not_join_runs(split_run, client):
    client.force_login(make_user(Role.ASSESSOR))
    assert client.get(join_url(), {"merge": MERGE}).status_code == 403
    assert client.post(join_url(), {"merge": MERGE}).status_code == 403
    assert Run.objects.count() == 2
