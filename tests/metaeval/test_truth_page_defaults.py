"""The truth page starts with the track's missing-run rule and says so; its messages name its own form; a topic
whose scores all tie has no figures, on the page and in the means, and the note counts it."""

import html
import math

import pytest
from django.template.defaultfilters import floatformat
from django.urls import reverse

from metaeval.truth import figure_names, per_topic_correlations
from tests.metaeval.truth_data import kiddie_leaderboards_import

pytestmark = pytest.mark.django_db

QUERY = {"a": "scores:judged", "truth": "scores:kiddie-truth", "top_k": "3"}


def text_of(response) -> str:
    return html.unescape(response.content.decode())


def test_without_a_missing_run_rule_the_page_counts_a_missing_run_0_and_says_so(organizer, tmp_path):
    kiddie_leaderboards_import(tmp_path)
    page = text_of(organizer.get(reverse("metaeval:truth"), QUERY))
    assert 'role="alert"' not in page
    # run4 counts 0: of the truth's run1..run4 (0.864 0.692 0.316 0.088), judged 0.6 0.8 0.4 0, one pair of six
    # is reversed (run1, run2): tau (5 - 1) / 6.
    assert "0.6667" in page
    assert "Truth runs the judged source lacks (counted 0): run4" in page
    assert (
        "Missing runs: <strong>zero</strong>: a truth run the judged source lacks counts 0 (the track's rule)" in page
    )
    assert "<option selected>zero</option>" in page


def test_the_refusal_names_the_pages_choice_not_a_command_line_flag(organizer, tmp_path):
    kiddie_leaderboards_import(tmp_path)
    page = text_of(organizer.get(reverse("metaeval:truth"), {**QUERY, "on_missing": "error"}))
    assert "missing in the judged leaderboard: run4; missing in the truth: run5" in page
    assert 'Choose "zero" under Missing runs' in page
    assert "--" not in page.split('role="alert">')[1].split("</p>")[0]
    short = text_of(organizer.get(reverse("metaeval:truth"), {**QUERY, "top_k": "2"}))
    assert "the top k must be at least 3 runs" in short and "--top-k" not in short
    words = text_of(organizer.get(reverse("metaeval:truth"), {**QUERY, "top_k": "ten"}))
    assert "Top k must be a whole number of runs, not 'ten'" in words and "invalid literal" not in words


def test_a_topic_whose_scores_all_tie_shows_no_figures_and_the_note_counts_it(organizer, tmp_path):
    kiddie_leaderboards_import(tmp_path)
    # skip: on bee the judged scores of run1, run2, run3 are all 0.8 (run4 left out, run5 not in the truth).
    query = {**QUERY, "on_missing": "skip", "per_topic": "1"}
    page = text_of(organizer.get(reverse("metaeval:truth"), query))
    assert "1 topic whose scores all tie, without figures: bee." in page
    bee = page.split('<td class="mono">bee</td>')[1].split("</tr>")[0]
    assert bee.count("—") == len(figure_names(3)) == 6
    assert not any(character.isdigit() for character in bee.replace("</td>", ""))
    download = organizer.get(reverse("metaeval:truth"), {**query, "format": "json"}).json()
    (pair,) = download["pairs"]
    assert pair["per_topic"]["topics_tied"] == ["bee"]
    assert set(pair["per_topic"]["topics"]["bee"].values()) == {None}


def test_per_topic_figures_leave_out_an_all_tied_topic_worked_by_hand():
    truth = {"t1": {"a": 3.0, "b": 2.0, "c": 1.0}, "t2": {"a": 3.0, "b": 2.0, "c": 1.0}}
    judged = {"t1": {"a": 1.0, "b": 1.0, "c": 1.0}, "t2": {"a": 3.0, "b": 1.0, "c": 2.0}}
    topics = per_topic_correlations(truth, judged, on_missing="error", top_k=3)
    # t1: the judged scores all tie; the tool would still give tau_ap_b -0.5 and a tau_GAP from run-id order.
    assert topics.tied == ["t1"]
    t1 = topics.topics["t1"]
    assert t1 is not None and len(t1) == 6 and all(math.isnan(value) for value in t1.values())
    # t2: truth a > b > c, judged a > c > b. Kendall: (a,b) and (a,c) agree, (b,c) not: (2 - 1) / 3.
    # tau_ap given the truth's order: b has a above it in both (1), c has a of {a, b} above it in the judged (1/2):
    # 2 / 2 x 1.5 - 1 = 0.5; given the judged order: c has a (1), b has a of {a, c} (1/2): 0.5 too; mean 0.5.
    assert topics.mean["kendall"] == pytest.approx(1 / 3) and topics.counted["kendall"] == 1
    assert topics.mean["tauap_b"] == pytest.approx(0.5) and topics.counted["tauap_b"] == 1
    assert topics.counted["tau_gap"] == 1


def test_each_topics_row_prints_the_figures_of_the_download_as_floatformat_does(organizer, tmp_path):
    kiddie_leaderboards_import(tmp_path)
    query = {**QUERY, "per_topic": "1"}
    page = organizer.get(reverse("metaeval:truth"), query).content.decode()
    (pair,) = organizer.get(reverse("metaeval:truth"), {**query, "format": "json"}).json()["pairs"]
    shown = 0
    for topic, figures in pair["per_topic"]["topics"].items():
        row = page.split(f'<td class="mono">{topic}</td>')[1].split("</tr>")[0]
        cells = [cell.split(">", 1)[1] for cell in row.split("</td>")[:-1]]
        if figures is None:
            assert cells == ["fewer than 3 runs"]
        else:
            names = figure_names(3)
            assert cells == [floatformat(figures[name], 4) if figures[name] is not None else "—" for name in names]
            shown += any(figures[name] is not None for name in names)
    assert shown  # at least one topic with figures
