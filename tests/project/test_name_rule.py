"""One rule for every name given to what is stored: sources, job outputs, studies, score tables.

A name outside it (`g/x`, a space, a newline, 5,000 characters) is refused by
every command and form that takes one, naming the option or field and the rule,
before anything is created. Stored, `g/x` broke every page that links to the
name (500 on the leaderboards and the run pages), and 5,000 characters broke
the write itself on PostgreSQL. Run on SQLite and on PostgreSQL.
"""

import argparse

import pytest
from django import forms
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command, get_commands, load_command_class
from django.urls import get_resolver, reverse
from django.utils.html import escape

from assessor.collection.forms import UploadForm
from assessor.jobs.command import JobCommand
from assessor.jobs.engine import JobRequestInvalid, job_create
from assessor.management.base import ImportCommand
from assessor.models import ImportBatch, Job, LabelSource, Upload
from assessor.names import NameField
from assessor.registry import registry
from assessor.sources import SourceRefused, source_claim
from assessor.work.roles import Role
from metaeval.models import ScoreTable, Study
from tests.builders import make_user

pytestmark = pytest.mark.django_db

RULE = "a name is 1 to 100 characters, each a-z, A-Z, 0-9, '-' or '_'"
# (name, what the refusal says of it before the rule)
BAD_NAMES = [
    ("g/x", "'g/x' holds '/'"),
    ("a b", "'a b' holds a space"),
    ("a\nb", "'a\\nb' holds a newline"),
    ("x" * 5_000, "5,000 characters"),
]
BAD_IDS = ["slash", "space", "newline", "long"]
# The job commands' options besides --name that argparse requires.
JOB_COMMAND_REQUIRED = {
    "run_argue": ["--bank", "bank"],
    "run_crucible": ["--bank", "bank"],
    "run_grades": ["--bank", "bank"],
    "run_prefnugget": ["--preferences", "prefs"],
}
# (import command, its required options, the name option)
IMPORT_NAME_OPTIONS = [
    ("import_grades", ["--bank", "bank"], "--name"),
    ("import_preferences", [], "--name"),
    ("import_banks", [], "--name"),
    ("import_nuggets", ["--kind", "manual"], "--name"),
    ("import_support", ["--method", "scratch"], "--name"),
    ("import_scores", [], "--name"),
    ("import_assignments", ["--nuggets", "auto", "--assigner", "manual"], "--nuggets-name"),
    ("import_assignments", ["--nuggets", "auto", "--assigner", "manual"], "--assigner-name"),
    ("import_qrels", [], "--source"),
]


def nothing_created() -> bool:
    return not (
        Job.objects.exists()
        or LabelSource.objects.exists()
        or ImportBatch.objects.exists()
        or Upload.objects.exists()
        or Study.objects.exists()
        or ScoreTable.objects.exists()
    )


def job_commands() -> list[str]:
    """Every command built on JobCommand (the apps' and the test app's)."""
    return sorted(
        command for command, app in get_commands().items() if isinstance(load_command_class(app, command), JobCommand)
    )


@pytest.fixture
def llm_set(settings):
    """An LLM endpoint is set (never called): the commands get as far as the name."""
    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"
    settings.LLM_MODEL = "model"
    settings.LLM_API_KEY = "key"


def test_the_job_commands_are_every_app_s():
    assert set(job_commands()) >= {
        "run_argue", "run_auto_assign", "run_auto_nuggets", "run_auto_support", "run_crucible", "run_grades",
        "run_preferences", "run_prefnugget", "run_query_bank", "run_umbrela",
    }  # fmt: skip


@pytest.mark.parametrize("command", job_commands())
@pytest.mark.parametrize(("name", "said"), BAD_NAMES, ids=BAD_IDS)
def test_every_job_command_refuses_a_name_outside_the_rule(llm_set, command, name, said):
    with pytest.raises(CommandError) as refusal:
        call_command(command, *JOB_COMMAND_REQUIRED.get(command, []), "--name", name, "--sync")
    assert str(refusal.value) == f"--name: {said}: {RULE}"
    assert nothing_created()


def test_a_job_command_without_a_name_is_refused_by_the_rule(llm_set):
    with pytest.raises(CommandError) as refusal:
        call_command("run_umbrela", "--sync")
    assert str(refusal.value) == f"--name: empty: {RULE}"
    assert nothing_created()


@pytest.mark.parametrize(("name", "said"), BAD_NAMES, ids=BAD_IDS)
def test_job_create_refuses_a_name_outside_the_rule_whoever_calls_it(name, said):
    with pytest.raises(JobRequestInvalid) as refusal:
        job_create(kind="umbrela", output_name=name, params={}, items=[("k", {})], prompts=[], family="qrels")
    assert str(refusal.value) == f"The name: {said}: {RULE}"
    assert nothing_created()


@pytest.mark.parametrize(("name", "said"), BAD_NAMES, ids=BAD_IDS)
def test_no_source_is_claimed_under_a_name_outside_the_rule(name, said):
    with pytest.raises(SourceRefused) as refusal:
        source_claim(family="qrels", name=name, kind=LabelSource.Kind.PERSON)
    assert refusal.value.message.endswith(f" name: {said}: {RULE}")
    assert nothing_created()


@pytest.mark.parametrize(
    ("command", "required", "option"), IMPORT_NAME_OPTIONS, ids=[c[2] + "-" + c[0] for c in IMPORT_NAME_OPTIONS]
)
@pytest.mark.parametrize(("name", "said"), BAD_NAMES, ids=BAD_IDS)
def test_every_import_command_refuses_a_name_outside_the_rule(write_file, command, required, option, name, said):
    path = write_file("file.txt", "anything\n")
    with pytest.raises(CommandError) as refusal:
        call_command(command, str(path), *required, option, name)
    assert str(refusal.value) == f"{option}: {said}: {RULE}\nNothing was imported."
    assert nothing_created()


def _name_like(action: argparse.Action) -> bool:
    return action.dest == "source" or action.dest.endswith("name")


def test_every_import_command_puts_its_name_options_under_the_rule():
    """A new import command, or a new name option, is held to the rule too."""
    checked = {}
    for command, app in get_commands().items():
        loaded = load_command_class(app, command)
        if isinstance(loaded, ImportCommand):
            parser = loaded.create_parser("manage.py", command)
            checked[command] = {a.dest for a in parser._actions if _name_like(a)} - set(loaded.name_options)
    assert {command for command, unchecked in checked.items() if unchecked} == set()
    assert {c for c, _, _ in IMPORT_NAME_OPTIONS} <= set(checked)


@pytest.mark.parametrize(("name", "said"), BAD_NAMES, ids=BAD_IDS)
@pytest.mark.parametrize("option", ["--name", "--llm-name"])
def test_study_refuses_a_name_outside_the_rule(option, name, said):
    names = {"--name": "study-1", option: name}
    study = ["--a", "support:a", "--b", "support:b", "--seed", "1", "--assessor", "nobody"]
    with pytest.raises(CommandError) as refusal:
        call_command("study", *study, *(part for pair in names.items() for part in pair))
    assert str(refusal.value) == f"{option}: {said}: {RULE}"
    assert nothing_created()


# --- forms ---------------------------------------------------------------------------------


def project_forms() -> list[type[forms.BaseForm]]:
    """Every form class of the project's apps (their views are loaded by the URLconf)."""
    get_resolver().url_patterns  # noqa: B018  (imports every page's module)
    found, waiting = [], [forms.BaseForm]
    while waiting:
        cls = waiting.pop()
        waiting.extend(cls.__subclasses__())
        if not cls.__module__.startswith(("django.", "axes.")) and cls.__module__.split(".")[0] != "tests":
            found.append(cls)
    return found


def test_no_form_takes_a_name_but_by_the_rule():
    """A SlugField has no length of its own, and its own wording: every name field is a NameField."""
    fields = [(cls, name, field) for cls in project_forms() for name, field in cls.base_fields.items()]
    fields += [(UploadForm, name, field) for name, field in UploadForm().fields.items()]
    slugs = {f"{cls.__name__}.{name}" for cls, name, field in fields if isinstance(field, forms.SlugField)}
    # An endpoint's name is no source's: its model's SlugField of 50 characters keeps it.
    assert slugs == {"EndpointForm.name"}
    named = {f"{cls.__name__}.{name}" for cls, name, field in fields if isinstance(field, NameField)}
    assert {"LaunchForm.name", "GiveWorkForm.name", "StudyForm.llm_name", "UploadForm.grade_source"} <= named


def name_fields() -> list[tuple[type[forms.BaseForm], str]]:
    found = [
        (cls, name)
        for cls in project_forms()
        for name, field in cls.base_fields.items()
        if isinstance(field, NameField)
    ]
    return found + [(UploadForm, name) for name, field in UploadForm().fields.items() if isinstance(field, NameField)]


@pytest.mark.parametrize(("name", "said"), BAD_NAMES, ids=BAD_IDS)
def test_every_name_field_refuses_a_name_outside_the_rule(name, said):
    fields = name_fields()
    assert len(fields) >= 20
    for cls, field in fields:
        form = cls(data={field: name})
        assert not form.is_valid()
        assert form.errors[field] == [f"{said}: {RULE}"], f"{cls.__name__}.{field}"


def test_a_name_field_takes_a_name_within_the_rule():
    form = UploadForm(data={"kind": "grades", "grade_source": "a" * 100}, files={"file": SimpleUploadedFile("g", b"x")})
    form.is_valid()
    assert "grade_source" not in form.errors


@pytest.mark.parametrize(("name", "said"), BAD_NAMES, ids=BAD_IDS)
def test_every_launch_page_refuses_a_name_outside_the_rule(organizer, llm_set, name, said):
    kinds = [kind.kind for kind in registry.launchable_kinds()]
    assert len(kinds) >= 9
    for kind in kinds:
        response = organizer.post(reverse("jobs:launch", args=[kind]), {"name": name})
        assert response.status_code == 200, kind
        assert escape(f"{said}: {RULE}") in response.content.decode(), kind
    assert nothing_created()


@pytest.mark.parametrize(("name", "said"), BAD_NAMES, ids=BAD_IDS)
def test_the_upload_page_refuses_a_source_name_outside_the_rule(client, upload_worker, name, said):
    client.force_login(make_user(Role.ORGANIZER))
    file = SimpleUploadedFile("grades.jsonl", b"{}\n")
    response = client.post(reverse("collection:upload"), {"kind": "grades", "file": file, "grade_source": name})
    assert response.status_code == 200  # the form again, not a queued upload
    assert escape(f"{said}: {RULE}") in response.content.decode()
    assert upload_worker == []
    assert nothing_created()
    assert User.objects.count() == 1
