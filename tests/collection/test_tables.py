"""The Python-rendered table rows print figures as Django's floatformat does, and escape what they show."""

import pytest
from django.template.defaultfilters import floatformat
from django.urls import reverse

from assessor.collection.tables import cell, rows_html, score_text, url_maker

VALUES = [0.0, 1.0, 0.5, 0.125, 0.33335, 0.12345, 2 / 3, 1e-05, 0.99995, 0.999949, 12.25, 12.35, 7.0, 1234.5]


@pytest.mark.parametrize("value", VALUES)
def test_a_score_reads_as_floatformat_prints_it(value):
    assert score_text("Vstrict", value) == floatformat(value, 4)
    assert score_text("L", value, mean=True) == floatformat(value, 1)
    assert score_text("L", round(value)) == floatformat(round(value), 0)


def test_cells_escape_their_text_and_link():
    row = rows_html([[cell("<b>&", href='/x?a=1&b="2"'), cell(3, css="num")]])
    assert row == '<tr><td><a href="/x?a=1&amp;b=&quot;2&quot;">&lt;b&gt;&amp;</a></td><td class="num">3</td></tr>'


@pytest.mark.parametrize("run_id", ["team.good", "team/x.v1.2", "a b+c", "ünï", "x%y", "a&b"])
def test_a_made_url_is_the_reversed_one(run_id):
    assert url_maker("collection:run")(run_id) == reverse("collection:run", args=[run_id])
