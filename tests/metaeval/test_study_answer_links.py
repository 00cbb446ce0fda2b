"""The disagreement study's page lists its sampled items, each judge's label of each, and links each to the page of
its answer with every judge's labels."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from assessor.models import Citation
from tests.builders import make_support_label
from tests.scenarios import make_scenario

pytestmark = pytest.mark.django_db

# (answer, sentence) of the first citations labelled, and the two methods' labels: every pair differs.
PAIRS = [(0, 0), (1, 0), (2, 0), (0, 2), (1, 2)]


def test_each_sampled_item_links_to_its_answer_page():
    scenario = make_scenario()
    for (answer, sentence), a, b in zip(PAIRS, [2, 2, 1, 0, 2], [0, 1, 2, 2, 0], strict=True):
        make_support_label(scenario.answers[answer], sentence, a, method="nist-a")
        make_support_label(scenario.answers[answer], sentence, b, method="nist-b")
    client = Client()
    client.force_login(scenario.organizer)
    data = {"name": "s1", "source_a": "support:nist-a", "source_b": "support:nist-b", "k": 15, "seed": 3}
    assert client.post(reverse("metaeval:studies"), {**data, "assessor": scenario.assessor.pk}).status_code == 302
    page = client.get(reverse("metaeval:study", args=["s1"])).content.decode()
    table = page.split('id="study-items"', 1)[1].split("</table>", 1)[0]
    links = re.findall(r'class="study-answer" href="([^"]+)"', table)
    assert len(links) == len(PAIRS)  # every disagreeing item is sampled (k = 15 > 5)
    expected = {reverse("collection:answer", args=[scenario.answers[answer].pk]) for answer, _ in PAIRS}
    assert set(links) == expected
    # Each row shows a's and b's labels of its citation, as planted.
    names = {0: "NS", 1: "PS", 2: "FS"}
    planted = {}
    for (answer, sentence), a, b in zip(PAIRS, [2, 2, 1, 0, 2], [0, 1, 2, 2, 0], strict=True):
        citation = Citation.objects.get(sentence__answer=scenario.answers[answer], sentence__index=sentence, position=0)
        planted[f"citation {citation.pk} (sentence {sentence})"] = [names[a], names[b]]
    rows = re.findall(r"<td>(citation \d+ \(sentence \d\))</td><td>(\w+)</td><td>(\w+)</td>", table)
    assert {text: [a, b] for text, a, b in rows} == planted
