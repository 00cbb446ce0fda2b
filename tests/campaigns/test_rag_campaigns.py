"""The TREC 2024 RAG family in two campaigns: the demo's files imported into both stand side by side, each
campaign's scores and meta-evaluation see its own topics and runs, its exports write the files' ids, and the
meta-evaluation's names (score tables, studies, kept comparisons) are per campaign."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction

from assessor.campaigns.services import campaign_create
from assessor.collection.score_formats import run_published_ids
from assessor.importing.topic_ids import command_topic_keys
from assessor.models import Campaign, LabelSource, Run, Topic
from assessor.models.keys import topic_key
from assessor.models.scope import campaign_first, campaign_scope
from assessor.scoring.scores import Scores
from assignment.exporting import assignments_lines
from assignment.models import AssignmentLabel
from assignment.selectors import nugget_scores, nugget_scores_from_labels
from demo.management.commands.load_demo import (
    DEMO_DIR,
    NIST_ASSIGNER,
    NIST_NUGGETS,
    NIST_POSTEDIT,
    NIST_SCRATCH,
    demo_imports,
    kiddie_imports,
)
from metaeval.comparison_page import kept_query
from metaeval.models import ScoreTable, Study
from metaeval.sources import source_parse, source_scores
from nuggets.exporting import nuggets_lines
from nuggets.models import NuggetSet
from support.exporting import support_lines
from support.models import SupportLabel
from support.selectors import support_scores_from_labels
from tests.builders import make_user

CONDITION = f"{NIST_NUGGETS}/{NIST_ASSIGNER}"
ASSIGNMENTS = DEMO_DIR / "nugget_assignment.jl"
SUPPORT_POSTEDIT = DEMO_DIR / "support_with_prediction.jsonl"
RUN_FILES = sorted((DEMO_DIR / "runs").glob("*.jsonl"))


def _topic_ids() -> list[str]:
    """The demo's topic ids, read from its topics file."""
    lines = (DEMO_DIR / "topics.tsv").read_text(encoding="utf-8").splitlines()
    return sorted(line.split("\t", 1)[0] for line in lines if line.strip())


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _rag_imports() -> list[tuple[str, list[str]]]:
    """The demo's TREC 2024 RAG imports: every step of load_demo but the report family's."""
    steps = demo_imports()
    return steps[: len(steps) - len(kiddie_imports(DEMO_DIR / "kiddie"))]


def _import_all(slug: str) -> None:
    for command, arguments in _rag_imports():
        call_command(command, *arguments, campaign=slug, stdout=StringIO(), stderr=StringIO())


@pytest.fixture
def campaigns(db) -> tuple[Campaign, Campaign]:
    """The first campaign and campaign "b", the demo's TREC files imported into both."""
    main = campaign_first()
    second = campaign_create(slug="b", title="B", families=["rag"])
    _import_all("main")
    _import_all("b")
    return main, second


def _counts(campaign: Campaign) -> dict[str, int]:
    with campaign_scope(campaign):
        return {
            "topics": Topic.objects.count(),
            "runs": Run.objects.count(),
            "nugget sets": NuggetSet.objects.count(),
            "assignment labels": AssignmentLabel.objects.count(),
            "support labels": SupportLabel.objects.count(),
        }


def test_the_same_files_in_two_campaigns_stand_side_by_side(campaigns):
    main, second = campaigns
    topics = _topic_ids()
    assert len(topics) == 4
    with campaign_scope(main):
        assert sorted(Topic.objects.values_list("pk", flat=True)) == topics
    with campaign_scope(second):
        assert sorted(Topic.objects.values_list("pk", flat=True)) == sorted(f"{t}@b" for t in topics)
        # The nugget sets belong to campaign b's topics, not to main's of the same id.
        assert sorted(NuggetSet.objects.values_list("topic_id", flat=True)) == sorted(f"{t}@b" for t in topics)
    main_counts, second_counts = _counts(main), _counts(second)
    assert main_counts == second_counts
    assert main_counts["topics"] == 4
    assert main_counts["runs"] >= len(RUN_FILES)
    # Every answer of the assignment file carries its topic's whole nugget list, one label per nugget.
    assert main_counts["assignment labels"] == sum(len(record["nuggets"]) for record in _jsonl(ASSIGNMENTS))
    # Both campaigns' labels are stored: each campaign sees half of them.
    assert AssignmentLabel.objects.count() == 2 * main_counts["assignment labels"]


def _figures_match(main: dict[str, Scores], second: dict[str, Scores]) -> None:
    """Both campaigns' scores are the same figures, each of its own topics' keys."""
    files = {"nuggets": ASSIGNMENTS, "condition": ASSIGNMENTS, "support": SUPPORT_POSTEDIT}
    for name in main:
        topics = {record.get("qid") or record["topic_id"] for record in _jsonl(files[name])}
        assert second[name].runs == main[name].runs
        assert second[name].run_means == main[name].run_means
        assert {topic for _, topic in main[name].per_topic} == topics
        assert {topic for _, topic in second[name].per_topic} == {f"{topic}@b" for topic in topics}
        renamed = {(run, topic.removesuffix("@b")): v for (run, topic), v in second[name].per_topic.items()}
        assert renamed == main[name].per_topic


def _judged_runs_check(scores: dict[str, Scores], campaign: Campaign) -> None:
    # The runs the files judged, each scored once in the campaign (not twice, from both campaigns).
    assert sorted(scores["nuggets"].runs) == sorted({record["run_id"] for record in _jsonl(ASSIGNMENTS)})
    # The support file names its runs with their teams' prefixes, as the track published them.
    with campaign_scope(campaign):
        published = run_published_ids()
    assert sorted(published.get(run, run) for run in scores["support"].runs) == sorted(
        {record["run_id"] for record in _jsonl(SUPPORT_POSTEDIT)}
    )


def test_each_campaign_computes_the_same_figures_from_its_own_labels(campaigns):
    main, second = campaigns
    figures: dict[str, dict[str, Scores]] = {}
    for campaign in campaigns:
        with campaign_scope(campaign):
            figures[campaign.slug] = {
                "nuggets": nugget_scores_from_labels(nuggets=NIST_NUGGETS, assigner=NIST_ASSIGNER),
                "support": support_scores_from_labels(method=NIST_POSTEDIT),
            }
    _judged_runs_check(figures["main"], main)
    _figures_match(figures["main"], figures["b"])


def test_each_campaign_keeps_the_same_figures_for_the_meta_evaluation(campaigns):
    main, second = campaigns
    figures: dict[str, dict[str, Scores]] = {}
    for campaign in campaigns:
        with campaign_scope(campaign):
            figures[campaign.slug] = {
                "nuggets": nugget_scores(nuggets=NIST_NUGGETS, assigner=NIST_ASSIGNER),
                "condition": source_scores(source_parse(CONDITION)),
                "support": source_scores(source_parse(f"support:{NIST_POSTEDIT}")),
            }
    _judged_runs_check(figures["main"], main)
    _figures_match(figures["main"], figures["b"])


def test_the_metaeval_command_gives_the_same_figures_in_both_campaigns(campaigns):
    printed = {}
    for slug in ("main", "b"):
        stdout = StringIO()
        call_command(
            "metaeval", "--a", f"support:{NIST_POSTEDIT}", "--b", f"support:{NIST_SCRATCH}", "--bootstrap", "0",
            campaign=slug, stdout=stdout,
        )  # fmt: skip
        printed[slug] = stdout.getvalue()
    assert "weighted_precision" in printed["main"]
    assert printed["b"] == printed["main"]


def test_a_run_added_to_one_campaign_is_not_in_the_other(campaigns, tmp_path):
    main, second = campaigns
    before = _counts(main)["runs"], _counts(second)["runs"]
    records = _jsonl(RUN_FILES[0])
    new_run = tmp_path / "only-b.jsonl"
    new_run.write_text(
        "".join(json.dumps({**record, "run_id": "only-in-b"}) + "\n" for record in records), encoding="utf-8"
    )
    call_command("import_run", str(new_run), campaign="b", stdout=StringIO())
    assert (_counts(main)["runs"], _counts(second)["runs"]) == (before[0], before[1] + 1)
    with campaign_scope(main):
        assert not Run.objects.filter(run_id="only-in-b").exists()
    with campaign_scope(second):
        assert Run.objects.filter(run_id="only-in-b").exists()


def test_exports_of_campaign_b_write_the_ids_of_the_input_files(campaigns):
    _, second = campaigns
    with campaign_scope(second):
        assigned = [json.loads(line) for line in assignments_lines(nuggets=NIST_NUGGETS, assigner=NIST_ASSIGNER)]
        supported = [json.loads(line) for line in support_lines(method=NIST_POSTEDIT, team_prefix=True)]
        nuggets = [json.loads(line) for line in nuggets_lines(name=NIST_NUGGETS)]
    # The assignment file names its runs without their teams' prefixes, the support file with them.
    assert sorted((r["qid"], r["run_id"]) for r in assigned) == sorted(
        (r["qid"], r["run_id"]) for r in _jsonl(ASSIGNMENTS)
    )
    assert sorted((r["topic_id"], r["run_id"]) for r in supported) == sorted(
        (r["topic_id"], r["run_id"]) for r in _jsonl(SUPPORT_POSTEDIT)
    )
    assert sorted(r["qid"] for r in nuggets) == _topic_ids()
    # The labels too, nugget by nugget, as the file gives them.
    given = {(r["qid"], r["run_id"]): [n["assignment"] for n in r["nuggets"]] for r in _jsonl(ASSIGNMENTS)}
    assert {(r["qid"], r["run_id"]): [n["assignment"] for n in r["nuggets"]] for r in assigned} == given


def test_a_score_table_and_a_study_named_alike_in_two_campaigns(campaigns, tmp_path):
    main, second = campaigns
    table = tmp_path / "x.tsv"
    topic = _topic_ids()[0]
    run = Path(RUN_FILES[0]).stem
    table.write_text(f"{run}\t{topic}\tV\t0.5\n{run}\tall\tV\t0.25\n", encoding="utf-8")
    for slug in ("main", "b"):
        call_command("import_scores", str(table), "--name", "x", campaign=slug, stdout=StringIO())
    assert sorted(ScoreTable.objects.unscoped().values_list("campaign__slug", "name")) == [("b", "x"), ("main", "x")]
    with campaign_scope(second):
        scores = source_scores(source_parse("scores:x"))
        # The file's topic is campaign b's topic: the table's per-topic cell is keyed as b's scores are.
        assert scores.per_topic == {(run, topic_key(topic)): {"V": 0.5}}
        assert scores.run_means == {run: {"V": 0.25}}
    user = make_user(username="study-assessor")
    for campaign in (main, second):
        with campaign_scope(campaign):
            sources = list(LabelSource.objects.order_by("pk")[:2])
            Study.objects.create(
                name="x", family="support", source_a=sources[0], source_b=sources[1], seed=1,
                judge=sources[0], assessor=user,
            )  # fmt: skip
            assert list(Study.objects.values_list("campaign_id", flat=True)) == [campaign.pk]
    with campaign_scope(second), pytest.raises(IntegrityError), transaction.atomic():
        Study.objects.create(
            name="x", family="support", source_a=sources[0], source_b=sources[1], seed=2, judge=sources[0],
            assessor=user,
        )  # fmt: skip


def test_a_kept_comparison_of_sources_named_alike_is_kept_apart(campaigns):
    main, second = campaigns
    query = {"a": CONDITION, "b": f"support:{NIST_SCRATCH}", "metric": "V"}
    with campaign_scope(main):
        kept_main = kept_query(query)
    with campaign_scope(second):
        kept_b = kept_query(query)
    assert kept_main is not None and kept_b is not None
    assert kept_main.query == kept_b.query
    assert kept_main.key != kept_b.key


# --- "@" refused ------------------------------------------------------------------------------------------------


def _refusal(command: str, path: Path, *args: str) -> str:
    with pytest.raises(CommandError) as refused:
        call_command(command, str(path), *args, stdout=StringIO(), stderr=StringIO())
    return str(refused.value)


def test_a_topic_id_holding_the_separator_is_refused_with_file_line_and_field(db, tmp_path):
    call_command("import_topics", str(DEMO_DIR / "topics.tsv"), stdout=StringIO())
    topic = _topic_ids()[0]
    assignment = _jsonl(ASSIGNMENTS)[0]
    bad_assignments = tmp_path / "assignments.jl"
    bad_assignments.write_text(
        json.dumps(assignment) + "\n" + json.dumps({**assignment, "qid": f"{topic}@b"}) + "\n", encoding="utf-8"
    )
    message = _refusal("import_assignments", bad_assignments, "--nuggets", "manual", "--assigner", "manual")
    assert f"{bad_assignments}, line 2, field 'qid'" in message
    assert "'@'" in message

    support = _jsonl(SUPPORT_POSTEDIT)[0]
    bad_support = tmp_path / "support.jsonl"
    bad_support.write_text(json.dumps({**support, "topic_id": f"{topic}@b"}) + "\n", encoding="utf-8")
    message = _refusal("import_support", bad_support, "--method", "scratch")
    assert f"{bad_support}, line 1, field 'topic_id'" in message

    bad_nuggets = tmp_path / "nuggets.jsonl"
    bad_nuggets.write_text(
        json.dumps({"qid": f"{topic}@main", "nuggets": [{"text": "a fact", "importance": "vital"}]}) + "\n",
        encoding="utf-8",
    )
    message = _refusal("import_nuggets", bad_nuggets, "--kind", "manual")
    assert f"{bad_nuggets}, line 1, field 'qid'" in message

    bad_scores = tmp_path / "scores.tsv"
    bad_scores.write_text("run1\tall\tV\t0.5\nrun1\t300@b\tV\t0.5\n", encoding="utf-8")
    message = _refusal("import_scores", bad_scores, "--name", "refused")
    assert f"{bad_scores}, line 2, field 'topic_id'" in message
    assert not ScoreTable.objects.exists()  # nothing half-written


def test_a_job_commands_topics_are_the_campaigns_and_one_holding_the_separator_is_refused(db, llm_server):
    campaign_first()  # (a flushed database has none: b would be the first, its keys unsuffixed)
    second = campaign_create(slug="b", title="B", families=["rag"])
    with campaign_scope(second):
        assert command_topic_keys(["2024-79154", "2024-213817"]) == ["2024-79154@b", "2024-213817@b"]
        assert command_topic_keys(None) is None
    with pytest.raises(CommandError, match="--topics: a topic id may not hold '@': '2024-79154@main'"):
        call_command("run_umbrela", "--name", "u", "--topics", "2024-79154@main", campaign="b", stdout=StringIO())
