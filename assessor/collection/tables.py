"""The rows of the organizer pages' large tables, rendered in Python.

A template loop costs about ten microseconds a cell (variable lookups, filters,
autoescape): the run page's 301 topics under four sources, or the topics page's
301 rows, spent most of their time there. These helpers write the same HTML
with the same escaping in one pass; the templates keep the table's frame.
"""

from collections.abc import Callable, Iterable
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from html import escape
from math import isfinite
from urllib.parse import quote

from django.urls import reverse
from django.utils.http import RFC3986_SUBDELIMS
from django.utils.safestring import SafeString, mark_safe

from assessor.models.keys import published_id
from assessor.registry import BADGE_PROVISIONAL, BADGE_STALE, Badge

BADGES_KEPT = 4096  # distinct badges rendered and kept (a topic page shows a few hundred)
FIGURES_KEPT = 65536  # distinct printed figures kept (a run page prints about 8,000, most of them repeats)
WORDS_METRIC = "L"  # a length in words: whole per answer, one decimal as a mean


def score_text(metric: str, value: float, *, mean: bool = False) -> str:
    """A figure as every page prints it: four decimals, a length in words whole (one decimal as a mean).

    Rounded half up from the float's shortest decimal form, as Django's `floatformat`
    does, so that a figure reads the same in a template and in these rows.
    """
    return figure_text(value, (1 if mean else 0) if metric == WORDS_METRIC else 4)


def figure_text(value: float, places: int = 4) -> str:
    """Any figure (a score, a correlation) as `floatformat:places` prints it, at a fraction of its cost."""
    # A cache would not find a NaN (unequal to itself): it is printed each time. Every other figure is kept, as
    # most recur (a topic's score is a fraction of a few nuggets); 0.0 and -0.0, one key, print alike.
    if value != value:
        return _figure_text(places, value)
    return _figure_kept(places, value)


def _figure_text(places: int, value: float) -> str:
    shortest = repr(value)
    if not isfinite(value):
        return shortest  # nan, inf, -inf: as floatformat prints them
    whole, _, fraction = shortest.partition(".")
    # Python's own rounding (of the exact binary value) agrees with rounding the shortest decimal half up
    # unless that decimal ends in a 5 just past the places kept: a tie, left to Decimal. Exponent forms
    # and values too large for the float's precision to reach the places also go to Decimal.
    if "e" in shortest or len(whole) > 12 or fraction[places:] == "5":
        text = str(Decimal(shortest).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))
    else:
        text = f"{value:.{places}f}"
    # floatformat signs only what rounds to something other than zero: -0.00001 reads 0.0000.
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


_figure_kept = lru_cache(maxsize=FIGURES_KEPT)(_figure_text)


def url_maker(name: str) -> Callable[[object], str]:
    """`reverse(name, args=[value])` for many values at the price of one reverse (quoted as reverse quotes)."""
    marker = "url-maker-argument"
    head, tail = reverse(name, args=[marker]).split(marker, 1)
    return lambda value: f"{head}{quote(str(value), safe=RFC3986_SUBDELIMS + '/~:@')}{tail}"


def topic_url_maker() -> Callable[[str], str]:
    """`url_maker("collection:topic")` for stored topic keys: the URL names the published id (<topic:...>), which
    `url_maker`'s single reverse cannot turn a key into."""
    make = url_maker("collection:topic")
    return lambda key: make(published_id(key))


def id_url_maker(name: str) -> Callable[[int], str]:
    """`reverse(name, args=[id])` for many row ids (an <int:...> route) at the price of one reverse."""
    marker = 987654321
    head, tail = reverse(name, args=[marker]).split(str(marker), 1)
    return lambda value: f"{head}{int(value)}{tail}"


def cell(text: object, *, css: str = "", href: str = "") -> str:
    """One <td>, its text escaped; a link when `href` is given.

    The standard library's escape, which Django's `escape` wraps (the same output, without its lazy-string
    wrapper: a third of the time at thousands of cells)."""
    content = escape(str(text))
    if href:
        content = f'<a href="{escape(href)}">{content}</a>'
    return f'<td class="{css}">{content}</td>' if css else f"<td>{content}</td>"


def score_cell(metric: str, value: float, *, mean: bool = False) -> str:
    """A figure's <td>: `score_text` is digits and a point only, so it needs no escaping."""
    return f'<td class="num">{score_text(metric, value, mean=mean)}</td>'


def rows_html(rows: Iterable[Iterable[str]]) -> SafeString:
    """<tr> rows of cells made by `cell`."""
    return mark_safe("".join(f"<tr>{''.join(cells)}</tr>" for cells in rows))  # noqa: S308 - every cell is escaped


# How the topic page says what a badge's state means: in its hover text, and in the legend above the answers.
BADGE_STATE_NOTES = {
    BADGE_PROVISIONAL: "made in open work or by a job still running: not counted yet",
    BADGE_STALE: "its nugget changed since the LLM labelled it: re-run the affected items",
}


@lru_cache(maxsize=BADGES_KEPT)
def badge_html(badge: Badge) -> str:
    """One label badge. Kept by value: the same badge (a nugget's label, a method's code) recurs on most
    answers of a topic page, and its title holds the nugget's text, which is long to escape."""
    if badge.state:
        css = f"{badge.css} {badge.state}" if badge.css else badge.state
        title = f"{badge.title} ({badge.state}: {BADGE_STATE_NOTES[badge.state]})"
    else:
        css, title = badge.css, badge.title
    return f'<span class="badge {escape(css)}" title="{escape(title)}">{escape(badge.text)}</span>'


def badges_html(badges: Iterable[Badge]) -> SafeString:
    """Label badges (the topic page shows a row of them per condition on each answer: hundreds a page)."""
    return mark_safe("".join(map(badge_html, badges)))  # noqa: S308 - every part is escaped


def sentence_html(text: str, citations: Iterable[tuple[str, int | None]], badges: Iterable[Badge]) -> str:
    """An answer's sentence as a list item: its text, its citations (the reference rank, or the segment id
    where the rank is unknown; the segment id on hover), then its label badges."""
    cites = "".join(
        f'<span class="cite" title="{escape(segment_id)}">[{rank if rank is not None else escape(segment_id)}]</span>'
        for segment_id, rank in citations
    )
    return f"<li>{escape(text)} {cites} {badges_html(badges)}</li>"
