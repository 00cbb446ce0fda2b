"""The support page's label keys are ManualAssign's for the same meanings (s support, p partial, n no support),
and a label saved through the button a key presses is stored as that label."""

import re
from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse

from support import kinds as support_kinds
from support.models import SupportLabel
from tests.scenarios import give_assign, give_support

pytestmark = pytest.mark.django_db


class RowForms(HTMLParser):
    """Each judging row's form as the page sends it: its action, hidden fields and label buttons (value, key, name)."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict] = []
        self._name_of: dict | None = None  # the button whose name is being read

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "form" and "jform" in (found.get("class") or ""):
            self.forms.append({"action": found["action"], "fields": {}, "buttons": []})
        elif self.forms and tag == "input" and found.get("type") == "hidden":
            self.forms[-1]["fields"][found["name"]] = found.get("value") or ""
        elif self.forms and tag == "button" and "data-key" in found:
            self._name_of = {"value": found["value"], "key": found["data-key"], "name": ""}
            self.forms[-1]["buttons"].append(self._name_of)

    def handle_endtag(self, tag: str) -> None:
        if tag == "button":
            self._name_of = None

    def handle_data(self, data: str) -> None:
        if self._name_of is not None and not self._name_of["name"]:
            self._name_of["name"] = data.strip()


def forms_of(client: Client, url: str) -> tuple[str, list[dict]]:
    response = client.get(url, follow=True)
    assert response.status_code == 200
    html = response.content.decode()
    parser = RowForms()
    parser.feed(html)
    assert parser.forms, "no row on the page"
    return html, parser.forms


@pytest.fixture
def assessor_client(scenario) -> Client:
    client = Client()
    client.force_login(scenario.assessor)
    return client


def test_the_support_page_keys_are_the_manual_assign_keys_of_the_same_meanings(scenario, assessor_client):
    support = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    assign = give_assign(scenario)
    _html, support_forms = forms_of(assessor_client, reverse("support:judge", args=[support.pk]))
    _html, assign_forms = forms_of(assessor_client, reverse("judge:assign", args=[assign.pk]))

    support_keys = [(b["name"], b["key"]) for b in support_forms[0]["buttons"]]
    assign_keys = [(b["name"], b["key"]) for b in assign_forms[0]["buttons"]]
    assert support_keys == [("FS", "s"), ("PS", "p"), ("NS", "n")]
    assert assign_keys == [("support", "s"), ("partial", "p"), ("not support", "n")]
    # Every row of both pages: support / FS on s, partial / PS on p, none / NS on n.
    for forms in (support_forms, assign_forms):
        assert {tuple(b["key"] for b in form["buttons"]) for form in forms} == {("s", "p", "n")}


def test_the_help_and_the_guidelines_name_the_keys_and_the_page_holds_the_hint(scenario, assessor_client):
    support = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    html, _forms = forms_of(assessor_client, reverse("support:judge", args=[support.pk]))
    keyboard = html[html.index('<h2 id="help-keys">') :]
    for key, name in (("s", "FS"), ("p", "PS"), ("n", "NS")):
        assert f"<dt><kbd>{key}</kbd></dt><dd>{name} for the selected row" in keyboard
        assert re.search(rf"<dt><span class=\"badge \w+\">{name}</span> [a-z ]+ <kbd>{key}</kbd></dt>", html)
    assert "<kbd>f</kbd>" not in html
    # The hint the script fills when a key does nothing: there, hidden, naming what a page is about.
    assert re.search(r'<p id="key-hint" [^>]*data-item="answer"[^>]*hidden></p>', html, re.S)


def test_a_save_by_key_s_stores_full_support(scenario, assessor_client):
    support = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    _html, forms = forms_of(assessor_client, reverse("support:judge", args=[support.pk]))
    form = forms[0]
    (button,) = [b for b in form["buttons"] if b["key"] == "s"]
    # What the page posts for that key: the row's form with the button's value (the script sends the same fields).
    response = assessor_client.post(form["action"], {**form["fields"], "label": button["value"]})
    assert response.status_code == 302

    saved = SupportLabel.objects.get(work=support)
    assert saved.label == 2  # FS: full support is 2 in the TREC 2024 support grades (2 FS, 1 PS, 0 NS)
    assert saved.label == SupportLabel.Label.FS
    assert saved.citation.sentence.index == int(form["fields"]["sentence"])
