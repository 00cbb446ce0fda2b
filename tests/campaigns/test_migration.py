"""A database of the schema before campaigns moves whole into the first campaign, "main", and takes a second one.

The database is migrated back to the state before campaigns (assessor 0026 and every migration that depends on
it unapplied, read from the migration graph, so that a later app's campaign migration is included), filled with
rows of every kind through the historical models, and migrated forward to the latest state.
"""

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.graph import MigrationGraph

CAMPAIGNS = ("assessor", "0026_campaigns")
# The models that hold a campaign column of their own (AssessorWork's is its topic's).
CAMPAIGN_COLUMNS = ("Topic", "Run", "RunAlias", "QrelSource", "LabelSource", "Job", "ImportBatch", "Upload")


def before_campaigns(graph: MigrationGraph) -> list[tuple[str, str]]:
    """Per app, its latest migration that does not depend on the campaigns' (assessor 0026)."""
    after = set(graph.backwards_plan(CAMPAIGNS))
    before = [node for node in graph.nodes if node not in after]
    return sorted(
        node
        for node in before
        if not any(child[0] == node[0] and child not in after for child in graph.node_map[node].children)
    )


@pytest.mark.django_db
def test_the_targets_are_every_app_s_state_before_campaigns():
    graph = MigrationExecutor(connection).loader.graph
    targets = dict(before_campaigns(graph))
    assert targets["assessor"] == "0025_llm_batch_mode"
    # An app whose own campaign migration depends on assessor's stops before it.
    assert targets["metaeval"] == "0005_kept_comparison_cells"
    assert len(targets) == len(before_campaigns(graph)), "one migration an app"
    # Nothing of the targets' plans needs the campaigns.
    planned = {node for target in targets.items() for node in graph.forwards_plan(target)}
    assert CAMPAIGNS not in planned


def _old_rows(old) -> dict[str, object]:
    """One row of every kind the campaigns take in, and of the rows around them, made as the old schema had them."""
    Group = old.get_model("auth", "Group")
    User = old.get_model("auth", "User")
    organizer = User.objects.create(username="legacy-organizer")
    organizer.groups.add(Group.objects.get_or_create(name="organizer")[0])
    assessor = User.objects.create(username="legacy-assessor")
    assessor.groups.add(Group.objects.get_or_create(name="assessor")[0])
    User.objects.create(username="legacy-visitor")  # no role: no campaign's member

    def model(name: str, app: str = "assessor"):
        return old.get_model(app, name).objects

    batch = model("ImportBatch").create(kind="topics", file_name="topics.tsv", sha256="0" * 64)
    topic = model("Topic").create(id="2024-1", query="what is a campaign", imported_from=batch)
    segment = model("Segment").create(docid="msmarco_v2.1_doc_00_0#0_0", text="a passage")
    run = model("Run").create(run_id="team.baseline", published_id="baseline")
    alias = model("RunAlias").create(alias="baseline", run=run)
    answer = model("Answer").create(run=run, topic=topic, text="An answer.", words=2)
    model("AnswerReference").create(answer=answer, rank=0, segment=segment)
    sentence = model("Sentence").create(answer=answer, index=0, text="An answer.")
    citation = model("Citation").create(sentence=sentence, position=0, segment=segment, reference_rank=0)
    LabelSource = model("LabelSource")
    qrels_source = LabelSource.create(family="qrels", name="nist", kind="file")
    qrel_source = model("QrelSource").create(name="nist", source=qrels_source)
    model("Qrel").create(source=qrel_source, topic=topic, segment=segment, grade=2)
    nugget_source = LabelSource.create(family="nuggets", name="nist", kind="file")
    assign_source = LabelSource.create(family="assignment", name="manual", kind="person")
    support_source = LabelSource.create(family="support", name="scratch", kind="person")
    job = model("Job").create(kind="auto_assign", output_name="gpt", model="m", status="done")
    model("JobItem").create(job=job, key="2024-1")
    upload = model("Upload").create(kind="topics", file_name="topics.tsv", batch=batch, created_by=organizer)
    work = model("AssessorWork").create(
        topic=topic, assessor=assessor, kind="assign_manual", nugget_set_name="nist", source=assign_source
    )
    nugget_set = model("NuggetSet", "nuggets").create(
        topic=topic, kind="auto_edit", name="nist", source=nugget_source, imported_from=batch
    )
    nugget = model("Nugget", "nuggets").create(nugget_set=nugget_set, position=0, text="a nugget", imported_from=batch)
    model("AssignmentLabel", "assignment").create(
        answer=answer, nugget=nugget, assigner="manual", assigner_kind="manual", label="support",
        source=assign_source, work=work, created_by=assessor,
    )  # fmt: skip
    model("SupportLabel", "support").create(
        citation=citation, method="scratch", method_kind="scratch", label=2, source=support_source, imported_from=batch
    )
    return {
        "organizer": organizer.pk, "assessor": assessor.pk, "topic": topic.pk, "run": run.pk, "alias": alias.pk,
        "job": job.pk, "upload": upload.pk, "batch": batch.pk, "work": work.pk, "qrel_source": qrel_source.pk,
    }  # fmt: skip


# Rows per model made above: each is still there after the migration.
ROWS = {
    ("assessor", "Topic"): 1, ("assessor", "Segment"): 1, ("assessor", "Run"): 1, ("assessor", "RunAlias"): 1,
    ("assessor", "Answer"): 1, ("assessor", "AnswerReference"): 1, ("assessor", "Sentence"): 1,
    ("assessor", "Citation"): 1, ("assessor", "LabelSource"): 4, ("assessor", "QrelSource"): 1,
    ("assessor", "Qrel"): 1, ("assessor", "Job"): 1, ("assessor", "JobItem"): 1, ("assessor", "Upload"): 1,
    ("assessor", "ImportBatch"): 1, ("assessor", "AssessorWork"): 1, ("nuggets", "NuggetSet"): 1,
    ("nuggets", "Nugget"): 1, ("assignment", "AssignmentLabel"): 1, ("support", "SupportLabel"): 1,
}  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_a_database_from_before_campaigns_moves_whole_into_main_and_takes_a_second_campaign(tmp_path: Path):
    try:
        _moved_and_second_campaign(tmp_path)
    finally:
        # The next tests find the latest schema, whatever failed here.
        call_command("migrate", verbosity=0)


def _moved_and_second_campaign(tmp_path: Path) -> None:
    executor = MigrationExecutor(connection)
    targets = before_campaigns(executor.loader.graph)
    executor.migrate(targets)
    made = _old_rows(executor.loader.project_state(targets).apps)

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    latest = executor.loader.graph.leaf_nodes()
    executor.migrate(latest)
    new = executor.loader.project_state(latest).apps

    Campaign = new.get_model("assessor", "Campaign")
    assert list(Campaign.objects.values_list("pk", "slug", "key_suffix")) == [(1, "main", "")]
    for (app, name), count in ROWS.items():
        assert new.get_model(app, name).objects.count() == count, name
    for name in CAMPAIGN_COLUMNS:
        assert set(new.get_model("assessor", name).objects.values_list("campaign_id", flat=True)) == {1}, name
    # The topic keeps its key, and the rows that name it still find it.
    assert list(new.get_model("assessor", "Topic").objects.values_list("pk", flat=True)) == ["2024-1"]
    assert new.get_model("assessor", "AssessorWork").objects.get(pk=made["work"]).topic.campaign_id == 1
    assert new.get_model("assessor", "Answer").objects.get().topic_id == "2024-1"
    assert new.get_model("assessor", "Qrel").objects.get().topic_id == "2024-1"
    assert new.get_model("nuggets", "NuggetSet").objects.get().topic_id == "2024-1"
    assert new.get_model("assessor", "Run").objects.get().run_id == "team.baseline"
    # People with a role are its members; a user without one is not.
    members = new.get_model("assessor", "CampaignMember").objects.values_list("campaign_id", "user_id")
    assert sorted(members) == sorted([(1, made["organizer"]), (1, made["assessor"])])

    # With the code as it is now: a second campaign gets the next id (on PostgreSQL, its sequence was moved past
    # the id the migration gave by hand), and the same topic id imported into it is a topic of its own.
    from assessor.campaigns.services import campaign_create
    from assessor.models import Topic

    second = campaign_create(slug="second", title="Second")
    assert second.pk == 2 and second.key_suffix == "@second"
    topics = tmp_path / "topics.tsv"
    topics.write_text("2024-1\twhat is a second campaign\n", encoding="utf-8")
    call_command("import_topics", str(topics), campaign="second", stdout=io.StringIO())
    rows = Topic.objects.unscoped().order_by("campaign_id").values_list("pk", "campaign_id", "query")
    assert list(rows) == [("2024-1", 1, "what is a campaign"), ("2024-1@second", 2, "what is a second campaign")]
