"""The endpoints page and the launch form's endpoint: organizers add endpoints by naming the key's variable, never the key."""

import pytest
from django.urls import reverse

from assessor.jobs.engine import job_run_sync
from assessor.models import Job, LLMEndpoint
from assessor.work.roles import Role
from assignment import kinds as assignment_kinds
from tests.builders import make_answer, make_nugget_set, make_run, make_topic, make_user

pytestmark = pytest.mark.django_db

NEW_ENDPOINT = {
    "name": "gamma",
    "base_url": "http://127.0.0.1:9/v1",
    "api_key_env": "LLM_KEY_GAMMA",
    "model": "model-gamma",
    "api_version": "",
    "concurrency": "2",
    "price_input": "0.5",
    "price_output": "1.5",
    "temperature": "0",
    "timeout": "30",
}


@pytest.fixture
def collection():
    topic = make_topic("p1", query="zebra stripes")
    make_nugget_set(topic, texts=["zebra stripes are black", "lions roar"], kind="manual", name="manual")
    make_answer(make_run("run0"), topic, [("Zebra stripes are black.", [])])


def test_assessors_cannot_see_the_endpoints(client):
    client.force_login(make_user(Role.ASSESSOR))
    assert client.get(reverse("jobs:endpoints")).status_code == 403


def test_the_page_lists_every_endpoint_and_no_key(organizer, two_llm_endpoints):
    page = organizer.get(reverse("jobs:endpoints")).content.decode()
    for text in ("default", "fake-model", "alpha", "model-alpha", "ALPHA_KEY", "beta", "model-beta", "BETA_KEY"):
        assert text in page
    assert "the file LLM_ENDPOINTS" in page
    assert "key-of-alpha" not in page and "key-of-beta" not in page


def test_an_organizer_adds_an_endpoint_by_naming_its_keys_variable(organizer, two_llm_endpoints, monkeypatch):
    monkeypatch.setenv("LLM_KEY_GAMMA", "secret-of-gamma")
    response = organizer.post(reverse("jobs:endpoints"), NEW_ENDPOINT)
    assert response.status_code == 302
    row = LLMEndpoint.objects.get(name="gamma")
    assert (row.model, row.api_key_env, row.concurrency, row.price_input, row.price_output) == (
        "model-gamma", "LLM_KEY_GAMMA", 2, 0.5, 1.5,
    )  # fmt: skip
    page = organizer.get(reverse("jobs:endpoints")).content.decode()
    assert "model-gamma" in page and "secret-of-gamma" not in page
    # Its jobs can choose it now.
    launch = organizer.get(reverse("jobs:launch", args=["auto_assign"])).content.decode()
    assert '<option value="gamma">' in launch


def test_an_endpoint_whose_key_variable_is_unset_is_shown_and_not_offered(organizer, two_llm_endpoints):
    organizer.post(reverse("jobs:endpoints"), NEW_ENDPOINT)
    page = organizer.get(reverse("jobs:endpoints")).content.decode()
    assert "reads its key from the environment variable LLM_KEY_GAMMA, which is not set" in page
    launch = organizer.get(reverse("jobs:launch", args=["auto_assign"])).content.decode()
    assert '<option value="gamma">' not in launch


@pytest.mark.parametrize(
    "fields, error",
    [
        ({"name": "default"}, "The endpoint &#x27;default&#x27; is configured in the settings"),
        ({"name": "alpha"}, "The endpoint &#x27;alpha&#x27; is configured in the settings"),
        ({"api_key_env": "sk-live-123"}, "is not the name of an environment variable"),
        ({"base_url": "", "api_key_env": ""}, "field &#x27;base_url&#x27;: required"),
        # The site's own secrets are never an endpoint's key, nor any variable not set aside for LLM keys.
        ({"api_key_env": "SECRET_KEY"}, "The variable SECRET_KEY is not set aside for LLM keys"),
        ({"api_key_env": "DATABASE_URL"}, "The variable DATABASE_URL is not set aside for LLM keys"),
        ({"api_key_env": "HOME"}, "The variable HOME is not set aside for LLM keys"),
    ],
)
def test_a_wrong_endpoint_is_refused_on_the_form(organizer, two_llm_endpoints, fields, error):
    response = organizer.post(reverse("jobs:endpoints"), {**NEW_ENDPOINT, **fields})
    assert response.status_code == 200
    assert error in response.content.decode()
    assert not LLMEndpoint.objects.exists()


def test_an_endpoint_is_removed_unless_a_job_of_it_is_open(organizer, two_llm_endpoints, monkeypatch, collection):
    monkeypatch.setenv("LLM_KEY_GAMMA", "secret-of-gamma")
    organizer.post(reverse("jobs:endpoints"), NEW_ENDPOINT)
    job = Job.objects.create(kind=assignment_kinds.AUTO_ASSIGN, output_name="g", model="model-gamma", endpoint_name="gamma")
    organizer.post(reverse("jobs:endpoint_delete", args=["gamma"]))
    assert LLMEndpoint.objects.filter(name="gamma").exists()
    Job.objects.filter(pk=job.pk).update(status=Job.Status.DONE)
    organizer.post(reverse("jobs:endpoint_delete", args=["gamma"]))
    assert not LLMEndpoint.objects.filter(name="gamma").exists()


def test_a_job_launched_on_the_page_uses_the_chosen_endpoint(organizer, two_llm_endpoints, collection, monkeypatch):
    monkeypatch.setattr("assessor.jobs.views.job_queue", lambda job: job_run_sync(job.pk))
    organizer.post(
        reverse("jobs:launch", args=["auto_assign"]), {"name": "by-beta", "nuggets": "manual", "endpoint": "beta"}
    )
    job = Job.objects.get(output_name="by-beta")
    assert (job.endpoint_name, job.model, job.status) == ("beta", "model-beta", "done")
    assert two_llm_endpoints["beta"].count == 1 and two_llm_endpoints["alpha"].count == 0
    detail = organizer.get(reverse("jobs:detail", args=[job.pk])).content.decode()
    assert "model-beta" in detail and "beta" in detail and two_llm_endpoints["beta"].url in detail
    listing = organizer.get(reverse("jobs:list")).content.decode()
    assert "<code>beta</code> · <code>model-beta</code>" in listing


def test_a_variable_the_administrator_sets_aside_may_be_named(organizer, two_llm_endpoints, settings, monkeypatch):
    settings.LLM_KEY_VARIABLES = ["TEAM_OPENAI_KEY", "SECRET_KEY"]
    monkeypatch.setenv("TEAM_OPENAI_KEY", "secret-of-the-team")
    response = organizer.post(reverse("jobs:endpoints"), {**NEW_ENDPOINT, "api_key_env": "TEAM_OPENAI_KEY"})
    assert response.status_code == 302
    assert LLMEndpoint.objects.get(name="gamma").api_key_env == "TEAM_OPENAI_KEY"
    # Listed or not, the site's own secret key is never sent to an endpoint.
    refused = organizer.post(reverse("jobs:endpoints"), {**NEW_ENDPOINT, "name": "delta", "api_key_env": "SECRET_KEY"})
    assert "The variable SECRET_KEY is not set aside for LLM keys" in refused.content.decode()


def test_an_endpoint_stored_with_a_site_secret_is_never_used(organizer, two_llm_endpoints, collection, monkeypatch):
    """A row from before the rule (or written in the admin) that names a secret: shown as unusable, never called."""
    from assessor.jobs.llm.client import LLMNotConfigured
    from assessor.jobs.llm.endpoints import endpoint_config

    LLMEndpoint.objects.create(name="leak", base_url=two_llm_endpoints["alpha"].url, api_key_env="SECRET_KEY", model="m")
    page = organizer.get(reverse("jobs:endpoints")).content.decode()
    assert "The LLM endpoint &#x27;leak&#x27; cannot be used: The variable SECRET_KEY is not set aside" in page
    with pytest.raises(LLMNotConfigured, match="SECRET_KEY is not set aside"):
        endpoint_config("leak")
    launch = organizer.get(reverse("jobs:launch", args=["auto_assign"])).content.decode()
    assert '<option value="leak">' not in launch
    response = organizer.post(
        reverse("jobs:launch", args=["auto_assign"]), {"name": "leaked", "nuggets": "manual", "endpoint": "leak"}
    )
    assert not Job.objects.filter(output_name="leaked").exists() and response.status_code == 200
    assert two_llm_endpoints["alpha"].count == 0
