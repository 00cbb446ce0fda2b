"""A cell of the confusion matrix lists the items behind it: those both sources labelled with the row's and the
column's label, by answer, each answer a link to its page of every judge's labels. The labels are
tests/collection/answer_judges.py's; the cells' items below are worked out from them by hand."""

import re
from html import unescape

import pytest
from django.urls import reverse

from assessor.models import Citation
from assessor.scoring.kept import scores_refresh
from assessor.work.roles import Role
from assignment.selectors import FAMILY as CONDITIONS
from metaeval.cell_items import CellError, cell_items
from nuggets.models import Nugget
from support.selectors import FAMILY as METHODS
from tests.builders import make_user
from tests.collection.answer_judges import judged_answer

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged():
    judged = judged_answer()
    topics = [judged.answer.topic_id]
    for assigner in ("alice", "gpt", "nist"):
        scores_refresh(family=CONDITIONS, columns=("auto_edit", assigner), topics=topics)
        scores_refresh(family=METHODS, columns=(assigner,), topics=topics)
    return judged


def test_a_condition_cell_lists_the_nuggets_both_assigners_labelled_so(judged):
    # alice and gpt both labelled n1 (support, support) and n2 (not_support, support); n3 alice alone, n4 gpt alone.
    date = Nugget.objects.get(nugget_set__name="auto_edit", text="date")
    cause = Nugget.objects.get(nugget_set__name="auto_edit", text="cause")
    cell = cell_items("auto_edit/alice", "auto_edit/gpt", "not_support", "support")
    assert cell.items == 1
    assert [(a.answer_id, a.run_id, a.items) for a in cell.answers] == [
        (judged.answer.pk, "team.a", [f"nugget {date.pk}"])
    ]
    agreed = cell_items("auto_edit/alice", "auto_edit/gpt", "support", "support")
    assert [a.items for a in agreed.answers] == [[f"nugget {cause.pk}"]]
    assert cell_items("auto_edit/alice", "auto_edit/gpt", "partial_support", "support").answers == []


def test_a_support_cell_lists_the_first_citations_both_methods_labelled_so(judged):
    # First citations both alice and gpt judged: s0 (FS, FS) and s1 (FS, NS); s2 gpt only.
    s1 = Citation.objects.get(sentence__answer=judged.answer, sentence__index=1, position=0)
    cell = cell_items("support:alice", "support:gpt", "FS", "NS")
    assert cell.items == 1 and cell.answers[0].items == [f"citation {s1.pk} (sentence 1)"]
    turned = cell_items("support:gpt", "support:alice", "FS", "NS")
    assert turned.items == 0


def test_a_label_the_family_does_not_give_is_refused(judged):
    with pytest.raises(CellError, match="'yes' is not a label"):
        cell_items("support:alice", "support:gpt", "yes", "NS")


def test_the_matrix_links_a_cell_to_its_answers_and_on_to_the_answer_page(judged, organizer_client):
    page = organizer_client.get(reverse("metaeval:index"), {"a": "auto_edit/alice", "b": "auto_edit/gpt"})
    html = page.content.decode()
    links = [unescape(href) for href in re.findall(r'class="cell-items" href="([^"]+)"', html)]
    # Cells with items: (not_support, support) and (support, support); the empty cells are not links.
    assert sorted(re.search(r"row=(\w+)&column=(\w+)", link).groups() for link in links) == [
        ("not_support", "support"),
        ("support", "support"),
    ]
    disagreeing = next(link for link in links if "row=not_support" in link)
    cell_page = organizer_client.get(disagreeing).content.decode()
    answer_url = reverse("collection:answer", args=[judged.answer.pk])
    assert f'href="{answer_url}"' in cell_page
    answer_page = organizer_client.get(answer_url)
    assert answer_page.status_code == 200 and 'class="differs"' in answer_page.content.decode()


def test_sources_without_item_labels_have_no_cell_page(judged, organizer_client):
    response = organizer_client.get(
        reverse("metaeval:cell"), {"a": "scores:none", "b": "support:gpt", "row": "FS", "column": "NS"}
    )
    assert response.status_code == 404


def test_an_assessor_cannot_open_a_cell_page(judged, client):
    client.force_login(make_user(Role.ASSESSOR))
    query = {"a": "support:alice", "b": "support:gpt", "row": "FS", "column": "NS"}
    assert client.get(reverse("metaeval:cell"), query).status_code == 403
