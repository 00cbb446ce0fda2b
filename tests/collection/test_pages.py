"""The organizer pages show the collection, its labels and scores, in a fixed number of queries."""

import json

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from assessor.models import KeptAnswerScore, KeptSource
from assessor.scoring.kept import scores_refresh
from assessor.work.roles import Role
from assignment.models import AssignmentLabel
from support.models import SupportLabel
from tests.builders import (
    make_answer,
    make_collection,
    make_nugget_set,
    make_qrel,
    make_run,
    make_segment,
    make_topic,
    make_user,
)
from tests.builders import make_assignment_label as label
from tests.builders import make_support_label as support

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_collection():
    """One topic judged by two sources, two runs, nuggets, labels of one condition and one support method."""
    topic = make_topic("2024-1", query="how do bees see colour")
    other_topic = make_topic("2024-2", query="an unjudged topic")
    seg_a = make_segment("doc_a#0_0", text="Bees see ultraviolet light.")
    seg_b = make_segment("doc_b#0_0", text="Bees have three photoreceptors.")
    seg_c = make_segment("doc_c#0_0", text="An irrelevant passage about cars.")
    make_qrel(topic, seg_a, grade=3, source="nist")
    make_qrel(topic, seg_b, grade=1, source="nist")
    make_qrel(topic, seg_c, grade=0, source="nist")
    make_qrel(topic, seg_a, grade=2, source="umbrela")
    make_qrel(topic, seg_b, grade=0, source="umbrela")
    good, weak = make_run("team.good"), make_run("weak")
    good_answer = make_answer(
        good,
        topic,
        [("Bees see ultraviolet.", [seg_a]), ("They have three receptors.", [seg_b, seg_a]), ("No citation here.", [])],
    )
    weak_answer = make_answer(weak, topic, [("Bees are insects.", [seg_c])])
    make_answer(good, other_topic)
    nugget_set = make_nugget_set(
        topic, nuggets=[("bees see ultraviolet", "vital"), ("three photoreceptors", "okay")]
    )
    vital, okay = nugget_set.nuggets.order_by("position")
    label(good_answer, vital, "support")
    label(good_answer, okay, "partial_support")
    label(weak_answer, vital, "not_support")
    label(weak_answer, okay, "support")
    support(good_answer, 0, SupportLabel.Label.FS)
    support(good_answer, 1, SupportLabel.Label.PS)
    support(weak_answer, 0, SupportLabel.Label.NS)
    return {"topic": topic, "good": good, "weak": weak, "good_answer": good_answer, "nugget_set": nugget_set}


# --- Topics ----------------------------------------------------------------------------


def test_the_topic_list_counts_what_each_topic_has(organizer, small_collection):
    response = organizer.get(reverse("collection:topics"))
    assert response.status_code == 200
    assert response.context["sources"] == ["nist", "umbrela"]
    rows = {row.topic.id: row for row in response.context["rows"]}
    judged = rows["2024-1"]
    assert judged.relevant == [2, 1]  # nist: grades 3 and 1; umbrela: grade 2 only
    assert response.context["count_titles"] == ["Nugget sets", "Nugget conditions", "Support methods"]
    # One nugget set, evaluated in one condition (auto_edit / manual) and one support method (scratch).
    assert (judged.answers, *judged.counts) == (2, 1, 1, 1)
    unjudged = rows["2024-2"]
    assert (unjudged.relevant, unjudged.answers, unjudged.counts[0]) == ([0, 0], 1, 0)
    page = response.content.decode()
    assert "how do bees see colour" in page
    assert f'href="{reverse("collection:topic", args=["2024-1"])}"' in page
    assert f'href="{reverse("collection:download_qrels", args=["nist"])}"' in page


def test_the_topic_page_shows_segments_nuggets_answers_and_labels(organizer, small_collection):
    response = organizer.get(reverse("collection:topic", args=["2024-1"]))
    page = response.content.decode()
    assert response.status_code == 200
    assert "how do bees see colour" in page
    # Relevant by any source: a and b; c is graded 0 everywhere.
    assert [row.segment.docid for row in response.context["segments"]] == ["doc_a#0_0", "doc_b#0_0"]
    assert [row.grades for row in response.context["segments"]] == [[3, 2], [1, 0]]
    assert "Bees see ultraviolet light." in page
    assert "An irrelevant passage about cars." not in page
    # Nuggets with their importance.
    assert "bees see ultraviolet" in page and "three photoreceptors" in page
    assert '<span class="badge vital">vital</span>' in page
    # Answers: run, sentences, citations by reference rank, labels.
    assert "team.good" in page and "weak" in page
    assert "They have three receptors." in page
    views = {view.answer.run.run_id: view for view in response.context["answers"]}
    good = views["team.good"]
    assert [[c.reference_rank for c in s.citations] for s in good.sentences] == [[0], [1, 0], []]
    assert [[(b.title, b.text) for b in s.badges] for s in good.sentences] == [
        [("scratch", "scratch: FS")],
        [("scratch", "scratch: PS")],
        [],
    ]
    [condition] = good.rows
    assert condition.caption == "auto_edit / manual"
    assert [badge.css for badge in condition.badges] == ["support", "partial_support"]
    assert [badge.css for badge in views["weak"].rows[0].badges] == ["not_support", "support"]
    # As printed: the condition's badges after its caption, a sentence's support badge after its citations.
    assert (
        '<span class="badge support" title="1. bees see ultraviolet: support">1S</span>'
        '<span class="badge partial_support" title="2. three photoreceptors: partial_support">2P</span>'
    ) in page
    assert '<span class="badge fs" title="scratch">scratch: FS</span>' in page
    assert (
        '<li>They have three receptors. <span class="cite" title="doc_b#0_0">[1]</span>'
        '<span class="cite" title="doc_a#0_0">[0]</span> <span class="badge ps" title="scratch">scratch: PS</span></li>'
    ) in page


def test_the_topic_page_prints_each_answer_whole(organizer, small_collection):
    """The answers are printed in Python (`AnswerView.html`): run link, length, sentences or text, label rows."""
    topic = small_collection["topic"]
    no_sentences = make_answer(make_run("a<b"), topic, sentences=[])
    no_sentences.text, no_sentences.words = "Plain & simple <text>", 3
    no_sentences.save()
    # A badge is made once per nugget, number and label and shared by the answers that show it; an answer
    # that labels only the second nugget numbers it 2, as the nugget list does.
    okay = small_collection["nugget_set"].nuggets.get(position=1)
    label(no_sentences, okay, "support")
    page = organizer.get(reverse("collection:topic", args=["2024-1"])).content.decode()
    run_url = reverse("collection:run", args=["a<b"])
    assert (
        f'<article class="answer"><h3><a href="{run_url}">a&lt;b</a> <span class="muted small">L = 3 words</span></h3>'
        '<p class="small">Plain &amp; simple &lt;text&gt;</p>'
        '<div class="labels"><span class="condition">auto_edit / manual</span> '
        '<span class="badge support" title="2. three photoreceptors: support">2S</span></div></article>'
    ) in page
    good_url = reverse("collection:run", args=["team.good"])
    assert f'<article class="answer"><h3><a href="{good_url}">team.good</a>' in page
    assert page.count('title="2. three photoreceptors: partial_support">2P</span>') == 1
    assert page.count('<article class="answer">') == 3


def test_the_topic_page_filters_segments_by_source(organizer, small_collection):
    response = organizer.get(reverse("collection:topic", args=["2024-1"]), {"source": "umbrela"})
    assert [row.segment.docid for row in response.context["segments"]] == ["doc_a#0_0"]
    assert "Bees have three photoreceptors." not in response.content.decode()
    response = organizer.get(reverse("collection:topic", args=["2024-1"]), {"source": "nist"})
    assert [row.segment.docid for row in response.context["segments"]] == ["doc_a#0_0", "doc_b#0_0"]


def test_an_unknown_topic_is_404(organizer, small_collection):
    assert organizer.get(reverse("collection:topic", args=["2024-999"])).status_code == 404


# --- Runs --------------------------------------------------------------------------------


def test_the_run_list_counts_answers(organizer, small_collection):
    response = organizer.get(reverse("collection:runs"))
    assert {run.run_id: run.answer_count for run in response.context["runs"]} == {"team.good": 2, "weak": 1}
    assert f'href="{reverse("collection:run", args=["team.good"])}"' in response.content.decode()


def test_the_run_page_shows_answers_and_per_topic_scores(organizer, small_collection):
    response = organizer.get(reverse("collection:run", args=["team.good"]))
    assert response.status_code == 200
    page = response.content.decode()
    assert "how do bees see colour" in page and "an unjudged topic" in page
    assert {a.topic_id: a.sentence_count for a in response.context["answers"]} == {"2024-1": 3, "2024-2": 1}
    sections = {section.title: section for section in response.context["sections"]}
    nuggets = sections["auto_edit nuggets / manual assignment"]
    [(topic_id, values)] = nuggets.rows
    by_metric = dict(zip(nuggets.metrics, values, strict=False))
    # Vital supported, okay partially: A = 1.5/2, V = 1, W = (1 + 0.5 * 0.5) / 1.5; L = 3 + 4 + 3 words.
    assert topic_id == "2024-1"
    assert by_metric["A"] == pytest.approx(0.75)
    assert by_metric["Astrict"] == pytest.approx(0.5)
    assert by_metric["V"] == by_metric["Vstrict"] == pytest.approx(1.0)
    assert by_metric["W"] == pytest.approx(1.25 / 1.5)
    assert by_metric["Wstrict"] == pytest.approx(1 / 1.5)
    assert by_metric["L"] == 10
    support_section = sections["scratch support"]
    [(_, values)] = support_section.rows
    # FS + PS over two citing sentences, over three sentences.
    assert dict(zip(support_section.metrics, values, strict=False)) == pytest.approx(
        {"weighted_precision": 0.75, "weighted_recall": 0.5}
    )
    assert "0.7500" in page
    # The per-topic rows, rendered in Python: a linked topic, four decimals, words whole, the mean below.
    topic_url = reverse("collection:topic", args=["2024-1"])
    assert f'<td class="mono"><a href="{topic_url}">2024-1</a></td><td class="num">0.7500</td>' in page
    # Each row ends with a link to the run's answer on the topic, its page of every judge's labels.
    answer_url = reverse("collection:answer", args=[small_collection["good_answer"].pk])
    answer_cell = f'<td><a class="small answer-link" href="{answer_url}">labels</a></td>'
    assert f'<td class="num">0.8333</td><td class="num">0.6667</td><td class="num">10</td>{answer_cell}</tr>' in page
    assert '<th class="num">0.6667</th><th class="num">10.0</th><th></th></tr></tfoot>' in page
    # The answers table: a row per topic with its query, sentences and words.
    assert f'<a href="{topic_url}">2024-1</a></td><td>how do bees see colour' in page


def test_a_run_page_section_is_kept_until_its_source_changes(organizer, small_collection):
    """The second view reads no kept row; after one source's refresh, that source's rows are read again."""
    cache.clear()
    url = reverse("collection:run", args=["team.good"])
    organizer.get(url)

    def kept_row_reads() -> list[str]:
        return [q["sql"] for q in queries.captured_queries if KeptAnswerScore._meta.db_table in q["sql"]]

    with CaptureQueriesContext(connection) as queries:
        again = organizer.get(url)
    assert not kept_row_reads()
    # The kept sources are read once, with their stamps; the sections list what that read found.
    source_reads = [q["sql"] for q in queries.captured_queries if KeptSource._meta.db_table in q["sql"]]
    assert len(source_reads) == 1
    assert '<td class="num">0.7500</td>' in again.content.decode()  # A of the nuggets, as before

    # The okay nugget goes from partial_support to support: A = (1 + 1) / 2, with the condition's refresh.
    okay = small_collection["nugget_set"].nuggets.get(position=1)
    AssignmentLabel.objects.filter(answer=small_collection["good_answer"], nugget=okay).update(label="support")
    scores_refresh(family="conditions", columns=("auto_edit", "manual"), topics=["2024-1"])
    manual = KeptSource.objects.get(family="conditions", name="auto_edit/manual")
    with CaptureQueriesContext(connection) as queries:
        after = organizer.get(url)
    [read] = kept_row_reads()  # the changed source's rows only
    assert f"IN ({manual.pk})" in read
    sections = {section.title: section for section in after.context["sections"]}
    [(_, values)] = sections["auto_edit nuggets / manual assignment"].rows
    assert dict(zip(sections["auto_edit nuggets / manual assignment"].metrics, values, strict=False))["A"] == 1.0
    [(_, support_values)] = sections["scratch support"].rows
    assert support_values == pytest.approx([0.75, 0.5])  # kept as it was


def test_the_run_page_and_the_leaderboards_list_sources_in_one_order(organizer, small_collection):
    """By name, sorted as text: "auto_edit-b/manual" before "auto_edit/manual" (a hyphen sorts before the
    slash that joins a condition's columns), where sorting the columns would put it after."""
    other = make_nugget_set(small_collection["topic"], nuggets=[("bees see ultraviolet", "vital")], name="auto_edit-b")
    label(small_collection["good_answer"], other.nuggets.get(), "support")
    names = ["auto_edit-b/manual", "auto_edit/manual"]
    leaderboards = organizer.get(reverse("collection:leaderboards")).context["conditions"]
    assert ["/".join(columns) for columns in leaderboards] == names
    sections = organizer.get(reverse("collection:run", args=["team.good"])).context["sections"]
    titles = [section.title for section in sections if section.title.endswith("assignment")]
    assert titles == ["auto_edit-b nuggets / manual assignment", "auto_edit nuggets / manual assignment"]


def test_a_run_id_with_dots_and_slashes_has_a_page(organizer):
    run = make_run("team/x.v1.2")
    make_answer(run, make_topic("2024-5"))
    url = reverse("collection:run", args=[run.run_id])
    assert organizer.get(url).status_code == 200


# --- Leaderboards ---------------------------------------------------------------------------


def test_the_leaderboards_page_lists_conditions_and_methods(organizer, small_collection):
    response = organizer.get(reverse("collection:leaderboards"))
    assert response.context["conditions"] == [("auto_edit", "manual")]
    assert response.context["methods"] == ["scratch"]
    page = response.content.decode()
    assert f'{reverse("assignment:leaderboard")}?nuggets=auto_edit&amp;assigner=manual' in page
    assert reverse("collection:download_scores", args=["auto_edit", "manual"]) in page
    assert reverse("collection:download_support", args=["scratch"]) in page


def test_the_condition_leaderboard_sorts_by_any_metric(organizer, small_collection):
    url = reverse("assignment:leaderboard")
    query = {"nuggets": "auto_edit", "assigner": "manual"}
    # team.good: Vstrict 1, Astrict 0.5 on its one topic; weak: Vstrict 0, Astrict 0.5; L 10 vs 3.
    default = organizer.get(url, query)
    assert [row.run_id for row in default.context["rows"]] == ["team.good", "weak"]
    assert default.context["sort"] == "Vstrict"
    # The row as printed: rank, the run's link, A Astrict V Vstrict W Wstrict to four decimals, L to one.
    figures = "".join(f'<td class="num">{text}</td>' for text in ("0.7500", "0.5000", "1.0000", "1.0000", "0.8333"))
    run_link = f'<td><a href="{reverse("collection:run", args=["team.good"])}">team.good</a></td>'
    assert f'<tr><td class="num">1</td>{run_link}{figures}<td class="num">0.6667</td><td class="num">10.0</td></tr>' in (
        default.content.decode()
    )
    ascending = organizer.get(url, {**query, "sort": "Vstrict", "dir": "asc"})
    assert [row.run_id for row in ascending.context["rows"]] == ["weak", "team.good"]
    by_length = organizer.get(url, {**query, "sort": "L", "dir": "asc"})
    assert [(row.run_id, row.values[-1]) for row in by_length.context["rows"]] == [("weak", 3.0), ("team.good", 10.0)]
    by_name = organizer.get(url, {**query, "sort": "run", "dir": "desc"})
    assert [row.run_id for row in by_name.context["rows"]] == ["weak", "team.good"]


def test_the_leaderboard_links_work_without_and_with_htmx(organizer, small_collection):
    url = reverse("assignment:leaderboard")
    query = {"nuggets": "auto_edit", "assigner": "manual"}
    page = organizer.get(url, query).content.decode()
    # Each sort header is a plain link and an htmx request to the same address.
    assert 'href="?nuggets=auto_edit&amp;assigner=manual&amp;sort=Wstrict&amp;dir=desc"' in page
    assert 'hx-get="?nuggets=auto_edit&amp;assigner=manual&amp;sort=Wstrict&amp;dir=desc"' in page
    # The sorted column flips its direction.
    assert 'href="?nuggets=auto_edit&amp;assigner=manual&amp;sort=Vstrict&amp;dir=asc"' in page
    assert "<html" in page

    partial = organizer.get(url, {**query, "sort": "A", "dir": "asc"}, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in partial
    assert 'id="leaderboard"' in partial
    assert partial.index("weak") < partial.index("team.good")
    # Going back in history when htmx's cache misses asks for the whole page.
    restored = organizer.get(url, query, HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true")
    assert "<html" in restored.content.decode()


def test_an_unknown_condition_names_the_known_ones(organizer, small_collection):
    response = organizer.get(reverse("assignment:leaderboard"), {"nuggets": "manual", "assigner": "auto"})
    assert response.status_code == 200
    page = response.content.decode()
    assert "nugget set &#x27;auto_edit&#x27; by assigner &#x27;manual&#x27;" in page
    # A page speaks of nugget sets and assigners, not of the commands' options.
    assert "--nuggets" not in page and "--assigner" not in page


def test_the_support_leaderboard_ranks_runs_by_weighted_precision(organizer, small_collection):
    response = organizer.get(reverse("collection:support_leaderboard"), {"method": "scratch"})
    rows = response.context["rows"]
    # team.good: (1 + 0.5) / 2 citing = 0.75, recall 1.5 / 3 = 0.5; weak: 0 and 0.
    assert [(row.run_id, row.values) for row in rows] == [
        ("team.good", pytest.approx([0.75, 0.5])),
        ("weak", pytest.approx([0.0, 0.0])),
    ]
    partial = organizer.get(
        reverse("collection:support_leaderboard"), {"method": "scratch", "sort": "run"}, HTTP_HX_REQUEST="true"
    )
    assert "<html" not in partial.content.decode()


# --- Downloads -------------------------------------------------------------------------------


def download_text(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, response
    assert response.streaming
    assert response["Content-Disposition"].startswith("attachment;")
    return b"".join(response.streaming_content).decode()


def test_the_qrels_download_is_the_export(organizer, small_collection):
    exporting = pytest.importorskip("assessor.collection.exporting")
    text = download_text(organizer, reverse("collection:download_qrels", args=["nist"]))
    assert text == "".join(exporting.qrels_lines(source="nist"))
    assert text == "2024-1 Q0 doc_a#0_0 3\n2024-1 Q0 doc_b#0_0 1\n2024-1 Q0 doc_c#0_0 0\n"


def test_the_nuggets_download_is_the_export(organizer, small_collection):
    exporting = pytest.importorskip("nuggets.exporting")
    text = download_text(organizer, reverse("collection:download_nuggets", args=["auto_edit"]))
    assert text == "".join(exporting.nuggets_lines(name="auto_edit"))
    assert "bees see ultraviolet" in text


def test_the_assignment_and_scores_downloads_are_the_exports(organizer, small_collection):
    exporting = pytest.importorskip("assignment.exporting")
    from assignment.selectors import nugget_scores

    text = download_text(organizer, reverse("collection:download_assignments", args=["auto_edit", "manual"]))
    assert text == "".join(exporting.assignments_lines(nuggets="auto_edit", assigner="manual"))
    scores = download_text(organizer, reverse("collection:download_scores", args=["auto_edit", "manual"]))
    assert scores == "".join(exporting.scores_lines(nugget_scores(nuggets="auto_edit", assigner="manual")))


def test_the_support_downloads_are_the_exports(organizer, small_collection):
    exporting = pytest.importorskip("support.exporting")
    from support.selectors import support_scores

    text = download_text(organizer, reverse("collection:download_support", args=["scratch"]))
    assert text == "".join(exporting.support_lines(method="scratch"))
    first_citation_labels = {
        record["run_id"]: [
            sentence["citations"][0].get("support") if sentence["citations"] else None
            for sentence in record["sentences"]
        ]
        for record in map(json.loads, text.splitlines())
    }
    assert first_citation_labels == {"team.good": ["2", "1", None], "weak": ["0"]}
    scores = download_text(organizer, reverse("collection:download_support_scores", args=["scratch"]))
    assert scores == "".join(exporting.support_scores_lines(support_scores(method="scratch")))


def test_a_download_streams_what_the_generator_yields(organizer, small_collection, monkeypatch):
    """Independent of the export modules: the view streams the generator's lines as they are."""
    from support import views

    def fake_export(*, method, **options):
        return (f"{method}\t{n}\n" for n in range(3))

    monkeypatch.setattr(views, "support_lines", fake_export)
    text = download_text(organizer, reverse("collection:download_support", args=["scratch"]))
    assert text == "scratch\t0\nscratch\t1\nscratch\t2\n"


def test_a_download_of_an_unknown_condition_or_source_is_404(organizer, small_collection):
    assert organizer.get(reverse("collection:download_qrels", args=["nobody"])).status_code == 404
    assert organizer.get(reverse("collection:download_scores", args=["auto_edit", "nobody"])).status_code == 404
    assert organizer.get(reverse("collection:download_support_scores", args=["nobody"])).status_code == 404


# --- Fixed query counts -----------------------------------------------------------------------


def count_queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(queries)


@pytest.mark.parametrize(
    "page",
    [
        "home", "topics", "topic", "runs", "run", "leaderboards", "leaderboard", "support_leaderboard", "upload",
        "assessor_home",
    ],
)
def test_pages_cost_a_fixed_number_of_queries(client, page, django_assert_max_num_queries):
    organizer = make_user(Role.ORGANIZER)
    counts = []
    for size in (2, 5):
        make_collection(size)
        user = organizer
        url = {
            "home": reverse("home"),
            "topics": reverse("collection:topics"),
            "topic": reverse("collection:topic", args=[f"2024-{size}0"]),
            "runs": reverse("collection:runs"),
            "run": reverse("collection:run", args=[f"run{size}-0"]),
            "leaderboards": reverse("collection:leaderboards"),
            "leaderboard": reverse("assignment:leaderboard"),
            "support_leaderboard": reverse("collection:support_leaderboard"),
            "upload": reverse("collection:upload"),
            "assessor_home": reverse("home"),
        }[page]
        if page == "assessor_home":
            from django.contrib.auth.models import User

            user = User.objects.get(username=f"assessor{size}")
        client.force_login(user)
        with django_assert_max_num_queries(30):
            counts.append(count_queries(client, url))
    assert counts[0] == counts[1], f"{page}: {counts[0]} queries with the small collection, {counts[1]} with the big"
