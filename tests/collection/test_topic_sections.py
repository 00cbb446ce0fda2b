"""The topic page: nuggets first, in-page navigation, untexted segments collapsed, answers' pages without the rest."""

import re

import pytest
from django.urls import reverse

from tests.builders import make_answer, make_nugget_set, make_qrel, make_run, make_segment, make_topic

pytestmark = pytest.mark.django_db


@pytest.fixture
def topic_page():
    """A topic with 2 texted and 3 untexted relevant segments, one irrelevant, a nugget set and 30 answers."""
    topic = make_topic("2024-7", query="why is the sky blue")
    for docid, text, grade in [
        ("doc_a#1", "Rayleigh scattering.", 3),
        ("doc_b#1", "Shorter wavelengths scatter more.", 1),
        ("doc_c#1", "", 2),
        ("doc_d#1", "", 1),
        ("doc_e#1", "", 3),
        ("doc_f#1", "", 0),
    ]:
        make_qrel(topic, make_segment(docid, text=text), grade=grade)
    make_nugget_set(topic, nuggets=[("light scatters", "vital")])
    for number in range(30):
        make_answer(make_run(f"run{number:02d}"), topic)
    return reverse("collection:topic", args=[topic.pk])


def test_the_nuggets_come_first_and_the_page_links_its_sections(organizer, topic_page):
    page = organizer.get(topic_page).content.decode()
    nav = re.search(r'<nav class="sections" aria-label="On this page">(.*?)</nav>', page, re.S)
    assert nav
    links = [re.sub(r"<[^>]+>|\s+", " ", text).split() for text in re.findall(r"<a [^>]*>(.*?)</a>", nav.group(1))]
    assert re.findall(r'<a href="(#\w+)"', nav.group(1)) == ["#nuggets", "#segments", "#answers"]
    assert [" ".join(words) for words in links] == ["Nugget sets", "Relevant segments (5)", "Answers (30)"]
    assert page.index('id="nuggets"') < page.index('id="segments"') < page.index('id="answers"')


def test_segments_without_text_are_collapsed_with_their_count(organizer, topic_page):
    page = organizer.get(topic_page).content.decode()
    shown, collapsed = page.split('<details class="untexted"', 1)
    shown = shown.split('id="segments"', 1)[1]
    assert "(5 segments, grade 1 or more; 2 with text)" in shown
    assert re.findall(r"doc_\w#1", shown) == ["doc_a#1", "doc_b#1"]
    assert "3 relevant segments with no text in the collection</summary>" in collapsed
    assert re.findall(r"doc_\w#1", collapsed.split('id="answers"')[0]) == ["doc_e#1", "doc_c#1", "doc_d#1"]
    assert "no text in the collection</span>" not in page


def test_the_further_answer_pages_do_not_repeat_nuggets_and_segments(organizer, topic_page):
    page = organizer.get(topic_page + "?page=2").content.decode()
    assert 'id="nuggets"' not in page and 'id="segments"' not in page and "doc_a#1" not in page
    assert "The nugget sets and relevant segments are on" in page
    assert len(re.findall(r'<article class="answer">', page)) == 5


def test_a_nugget_set_without_nuggets_says_so_and_numbers_nothing(organizer):
    topic = make_topic("2024-8")
    make_nugget_set(topic, name="manual", nuggets=[])
    make_nugget_set(topic, name="nist", nuggets=[("light scatters", "vital"), ("blue is short", "okay")])
    page = organizer.get(reverse("collection:topic", args=[topic.pk])).content.decode()
    panels = dict(re.findall(r'<section class="panel">\s*<h3>(\w+)(.*?)</section>', page, re.S))
    assert "No nuggets yet." in panels["manual"] and "<li" not in panels["manual"]
    assert len(re.findall(r"<li>", panels["nist"])) == 2
