"""Every model change comes with its migration."""

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_no_migration_is_pending(capsys):
    try:
        call_command("makemigrations", "--check", "--dry-run", verbosity=1)
    except SystemExit:
        pytest.fail(f"makemigrations --check found model changes without a migration:\n{capsys.readouterr().out}")


BEFORE_SOURCES = [
    ("assessor", "0005_work_operation"),
    ("nuggets", "0002_nugget_edit_op_id"),
    ("assignment", "0001_initial"),
    ("support", "0001_initial"),
]
AFTER_SOURCES = [
    ("assessor", "0008_label_source_required"),
    ("nuggets", "0005_nugget_set_source_required"),
    ("assignment", "0004_label_source_required"),
    ("support", "0004_label_source_required"),
]


@pytest.mark.django_db(transaction=True)
def test_existing_labels_get_sources_of_the_kind_their_rows_show():
    """A database from before label sources: each name becomes a source, its kind read from its rows."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE_SOURCES)
    old = executor.loader.project_state(BEFORE_SOURCES).apps
    User = old.get_model("auth", "User")
    person = User.objects.create(username="legacy-assessor")
    topic = old.get_model("assessor", "Topic").objects.create(id="t1", query="q")
    run = old.get_model("assessor", "Run").objects.create(run_id="r1")
    answer = old.get_model("assessor", "Answer").objects.create(run=run, topic=topic, text="a", words=1)
    batch = old.get_model("assessor", "ImportBatch").objects.create(
        kind="assignments", file_name="nist.jsonl", sha256="0"
    )
    job = old.get_model("assessor", "Job").objects.create(
        kind="auto_assign", output_name="gpt", model="model-x", prompt_versions={"assign": 1}, status="done"
    )
    work = old.get_model("assessor", "AssessorWork").objects.create(
        topic=topic, assessor=person, kind="assign_manual", nugget_set_name="nist", status="submitted"
    )
    nugget_set = old.get_model("nuggets", "NuggetSet").objects.create(
        topic=topic, kind="auto_edit", name="nist", imported_from=batch
    )
    nugget = old.get_model("nuggets", "Nugget").objects.create(
        nugget_set=nugget_set, position=0, text="n", importance="vital", imported_from=batch
    )
    Label = old.get_model("assignment", "AssignmentLabel")
    Label.objects.create(
        answer=answer, nugget=nugget, assigner="nist", assigner_kind="manual", label="support", imported_from=batch
    )
    Label.objects.create(answer=answer, nugget=nugget, assigner="gpt", assigner_kind="auto", label="support", job=job)
    Label.objects.create(
        answer=answer, nugget=nugget, assigner="manual", assigner_kind="manual", label="support", created_by=person
    )

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER_SOURCES)
    new = executor.loader.project_state(AFTER_SOURCES).apps
    sources = {(s.family, s.name): (s.kind, s.model) for s in new.get_model("assessor", "LabelSource").objects.all()}
    assert sources == {
        ("nuggets", "nist"): ("file", ""),
        ("assignment", "nist"): ("file", ""),
        ("assignment", "gpt"): ("llm", "model-x"),
        ("assignment", "manual"): ("person", ""),
    }
    labels = {label.assigner: label for label in new.get_model("assignment", "AssignmentLabel").objects.all()}
    assert {name: label.source.name for name, label in labels.items()} == {
        "nist": "nist",
        "gpt": "gpt",
        "manual": "manual",
    }
    # The person's label is tied to the work it was made in, and the work to its source.
    assert labels["manual"].work_id == work.pk and labels["nist"].work_id is None
    assert new.get_model("assessor", "AssessorWork").objects.get(pk=work.pk).source.name == "manual"
    call_command("migrate", verbosity=0)


BEFORE_OPERATIONS = [("nuggets", "0005_nugget_set_source_required"), ("assessor", "0018_kinds_from_the_apps")]
AFTER_OPERATIONS = [("nuggets", "0006_nugget_edit_operations")]


@pytest.mark.django_db(transaction=True)
def test_nugget_edit_operation_ids_join_the_record_of_operations():
    """An edit's operation id from before the upgrade is found where every save's is: a retry stays applied once."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE_OPERATIONS)
    old = executor.loader.project_state(BEFORE_OPERATIONS).apps
    person = old.get_model("auth", "User").objects.create(username="legacy-assessor")
    topic = old.get_model("assessor", "Topic").objects.create(id="t1", query="q")
    source = old.get_model("assessor", "LabelSource").objects.create(family="nuggets", name="manual", kind="person")
    work = old.get_model("assessor", "AssessorWork").objects.create(
        topic=topic, assessor=person, kind="nuggets_manual", nugget_set_name="manual", source=source
    )
    nugget_set = old.get_model("nuggets", "NuggetSet").objects.create(
        topic=topic, kind="manual", name="manual", source=source, created_by=person
    )
    Edit = old.get_model("nuggets", "NuggetEdit")
    add = Edit.objects.create(nugget_set=nugget_set, user=person, operation="add", set_version=1, op_id="op-a")
    Edit.objects.create(nugget_set=nugget_set, user=person, operation="move", set_version=2, op_id="")

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER_OPERATIONS)
    new = executor.loader.project_state(AFTER_OPERATIONS).apps
    rows = list(new.get_model("assessor", "WorkOperation").objects.values_list("work_id", "op_id", "answer"))
    # The add was made on version 0 of the list (its edit holds the version after it).
    assert rows == [(work.pk, "op-a", {"edit": add.pk, "request": ["nuggets", "add", 0]})]
    call_command("migrate", verbosity=0)


BEFORE_PICODOLLARS = [("assessor", "0020_run_alias_set_aside")]
AFTER_PICODOLLARS = [("assessor", "0021_cost_in_picodollars")]


@pytest.mark.django_db(transaction=True)
def test_costs_in_dollars_become_the_same_costs_in_picodollars():
    from decimal import Decimal

    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE_PICODOLLARS)
    old = executor.loader.project_state(BEFORE_PICODOLLARS).apps
    job = old.get_model("assessor", "Job").objects.create(
        kind="auto_assign", output_name="gpt", model="m", status="done", cost=Decimal("12.345678")
    )
    prompt = old.get_model("assessor", "PromptTemplate").objects.create(
        name="assign", version=1, system="s", user="u", sha256="0"
    )
    call = old.get_model("assessor", "LLMCall").objects.create(
        job=job, prompt=prompt, model="m", messages=[], cost=Decimal("0.000007")
    )

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER_PICODOLLARS)
    new = executor.loader.project_state(AFTER_PICODOLLARS).apps
    assert new.get_model("assessor", "Job").objects.get(pk=job.pk).cost_picodollars == 12_345_678_000_000
    assert new.get_model("assessor", "LLMCall").objects.get(pk=call.pk).cost_picodollars == 7_000_000
    call_command("migrate", verbosity=0)


BEFORE_PREFERENCE_MAKERS = [("preferences", "0001_initial"), ("assessor", "0022_one_job_per_output")]
AFTER_PREFERENCE_MAKERS = [("preferences", "0002_label_provenance")]


@pytest.mark.django_db(transaction=True)
def test_a_persons_preferences_name_their_maker_after_the_upgrade():
    """Preferences from before they carried LabelProvenance: a person's are made by the work's assessor, with their
    seconds; an LLM's and a file's keep their job or file and lose the zero seconds that were never a person's."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE_PREFERENCE_MAKERS)
    old = executor.loader.project_state(BEFORE_PREFERENCE_MAKERS).apps
    ann = old.get_model("auth", "User").objects.create(username="ann")
    topic = old.get_model("assessor", "Topic").objects.create(id="t1", query="q")
    runs = [old.get_model("assessor", "Run").objects.create(run_id=f"r{n}") for n in (1, 2)]
    a, b = (old.get_model("assessor", "Answer").objects.create(run=r, topic=topic, text="x", words=1) for r in runs)
    Source = old.get_model("assessor", "LabelSource")
    people = Source.objects.create(family="preferences", name="people", kind="person")
    llm = Source.objects.create(family="preferences", name="gpt", kind="llm")
    work = old.get_model("assessor", "AssessorWork").objects.create(
        topic=topic, assessor=ann, kind="preference_judging", source=people
    )
    job = old.get_model("assessor", "Job").objects.create(kind="preferences", output_name="gpt", status="done")
    Label = old.get_model("preferences", "PreferenceLabel")
    Label.objects.create(source=people, topic=topic, first=a, second=b, label=1, work=work, seconds_spent=12.5)
    Label.objects.create(source=llm, topic=topic, first=b, second=a, label=2, job=job)

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER_PREFERENCE_MAKERS)
    new = executor.loader.project_state(AFTER_PREFERENCE_MAKERS).apps
    rows = new.get_model("preferences", "PreferenceLabel").objects.order_by("label")
    assert list(rows.values_list("source__name", "created_by_id", "job_id", "seconds_spent")) == [
        ("people", ann.pk, None, 12.5),
        ("gpt", None, job.pk, None),
    ]
    call_command("migrate", verbosity=0)


BEFORE_EXACT_SUMS = [("assessor", "0022_one_job_per_output")]
AFTER_EXACT_SUMS = [("assessor", "0023_kept_exact_sums")]


@pytest.mark.django_db(transaction=True)
def test_kept_run_sums_become_the_exact_sums_of_their_answers():
    """Sums kept as float partials become the sums of the answers' fractions: a run scoring 1/3, 1, 1 keeps 7/3."""
    from fractions import Fraction

    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE_EXACT_SUMS)
    old = executor.loader.project_state(BEFORE_EXACT_SUMS).apps
    run = old.get_model("assessor", "Run").objects.create(run_id="r1")
    source = old.get_model("assessor", "KeptSource").objects.create(
        family="methods", name="scratch", metrics=["score"], topics=["t0", "t1", "t2"]
    )
    Kept = old.get_model("assessor", "KeptAnswerScore")
    for n, value in enumerate([1 / 3, 1.0, 1.0]):
        topic = old.get_model("assessor", "Topic").objects.create(id=f"t{n}", query="q")
        answer = old.get_model("assessor", "Answer").objects.create(run=run, topic=topic, text="a", words=1)
        Kept.objects.create(source=source, answer=answer, run=run, topic=topic, values={"score": value})
    old.get_model("assessor", "KeptRunScore").objects.create(
        source=source, run=run, sums={"score": 2.3333333333333335}, partials={"score": [2.3333333333333335]}, answered=3
    )

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER_EXACT_SUMS)
    new = executor.loader.project_state(AFTER_EXACT_SUMS).apps
    row = new.get_model("assessor", "KeptRunScore").objects.get(run__run_id="r1")
    assert row.exact_sums == {"score": "7/3"}
    assert row.sums == {"score": float(Fraction(7, 3))}
    call_command("migrate", verbosity=0)
