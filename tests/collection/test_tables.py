"""The Python-rendered table rows print figures as Django's floatformat does, and escape what they show."""

import random

import pytest
from django.template.defaultfilters import floatformat
from django.urls import reverse

from assessor.collection.tables import cell, rows_html, score_text, sentence_html, url_maker
from assessor.registry import Badge

VALUES = [0.0, 1.0, 0.5, 0.125, 0.33335, 0.12345, 2 / 3, 1e-05, 0.99995, 0.999949, 12.25, 12.35, 7.0, 1234.5]


@pytest.mark.parametrize("value", VALUES)
def test_a_score_reads_as_floatformat_prints_it(value):
    assert score_text("Vstrict", value) == floatformat(value, 4)
    assert score_text("L", value, mean=True) == floatformat(value, 1)
    assert score_text("L", round(value)) == floatformat(round(value), 0)


def test_random_scores_and_ties_read_as_floatformat_prints_them():
    rng = random.Random(12)
    values = [rng.random() for _ in range(3000)]
    values += [rng.randrange(100_000) / 100_000 for _ in range(3000)]  # ties at the fifth decimal: ...5
    values += [rng.randrange(20_000) / 20 for _ in range(1000)]  # lengths in words, ties at the first decimal
    values += [rng.random() * 1e-6 for _ in range(200)] + [rng.random() * 1e9 for _ in range(200)]
    for value in values:
        assert score_text("W", value) == floatformat(value, 4), value
        assert score_text("L", value, mean=True) == floatformat(value, 1), value


def test_kept_figures_read_as_floatformat_prints_them_whatever_came_first():
    """Figures are kept by value: a repeat, a signed zero, a negative that rounds to zero or a NaN after another
    still reads as floatformat's."""
    values = [0.5, -0.0, 0.0, -0.0, float("nan"), 1 / 3, -1 / 3, 1 / 3, 0.5, float("inf"), -0.25, -0.00001, -0.04]
    for value in values:
        assert score_text("Vstrict", value) == floatformat(value, 4), value
        assert score_text("L", value, mean=True) == floatformat(value, 1), value


def test_cells_escape_their_text_and_link():
    row = rows_html([[cell("<b>&", href='/x?a=1&b="2"'), cell(3, css="num")]])
    assert row == '<tr><td><a href="/x?a=1&amp;b=&quot;2&quot;">&lt;b&gt;&amp;</a></td><td class="num">3</td></tr>'


@pytest.mark.parametrize("run_id", ["team.good", "team/x.v1.2", "a b+c", "ünï", "x%y", "a&b"])
def test_a_made_url_is_the_reversed_one(run_id):
    assert url_maker("collection:run")(run_id) == reverse("collection:run", args=[run_id])


def test_a_sentence_shows_its_citations_by_rank_or_segment_and_escapes_its_text():
    html = sentence_html("A < B & C", [("doc#1", 0), ('doc"2', None)], [Badge(text="auto: FS", css="fs", title="auto")])
    assert html == (
        '<li>A &lt; B &amp; C <span class="cite" title="doc#1">[0]</span>'
        '<span class="cite" title="doc&quot;2">[doc&quot;2]</span> <span class="badge fs" title="auto">auto: FS</span></li>'
    )
