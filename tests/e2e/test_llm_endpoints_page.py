"""An organizer adds an LLM endpoint in the browser and launches a job on it."""

import re

import pytest
from django.urls import reverse

from assessor.models import LLMEndpoint
from assessor.work.roles import Role
from tests.builders import make_user

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_organizer_adds_an_endpoint_and_a_job_can_choose_it(open_as, two_llm_endpoints, monkeypatch):
    monkeypatch.setenv("LLM_KEY_GAMMA", "secret-of-gamma")
    page = open_as(make_user(Role.ORGANIZER), reverse("jobs:endpoints"))
    page.get_by_label("Name").fill("gamma")
    page.get_by_label("Base URL").fill(two_llm_endpoints["beta"].url)
    page.get_by_label("Key's environment variable").fill("LLM_KEY_GAMMA")
    page.get_by_label("Model").fill("model-gamma")
    page.get_by_label("Calls at once").fill("2")
    page.get_by_role("button", name="Add the endpoint").click()
    expect(page.locator(".messages li.success")).to_have_text("Endpoint 'gamma' added: jobs can choose it now.")
    rows = page.locator("#endpoints tbody tr")
    names = ["default", "alpha", "beta", "gamma"]
    expect(rows.locator("td:first-child")).to_have_text(names)
    gamma = rows.nth(3)
    expect(gamma.locator("td").nth(1)).to_have_text("model-gamma")
    expect(gamma.locator("td").nth(3)).to_have_text("LLM_KEY_GAMMA")
    expect(gamma.locator("td.state")).to_have_text("ready")
    expect(gamma.locator("td.batch")).to_have_text("no")
    assert "secret-of-gamma" not in page.content()
    assert LLMEndpoint.objects.get(name="gamma").concurrency == 2
    page.goto(page.url.replace(reverse("jobs:endpoints"), reverse("jobs:launch", args=["auto_assign"])))
    # Each choice reads "name: model at URL".
    choices = page.get_by_label("Endpoint").locator("option")
    expect(choices).to_have_text([re.compile(rf"^{name}(:|$)") for name in names])
