"""403, 404 and 500 come in the site's frame with a way home, and a 404 says why when the view said."""

import pytest
from django.test import RequestFactory
from django.urls import reverse
from django.views.defaults import server_error

from assessor.work.roles import Role
from tests.builders import make_qrel, make_segment, make_topic, make_user

pytestmark = pytest.mark.django_db

HOME_LINK = '<a class="button" href="/">Back to the home page</a>'
SITE_HEADER = '<a class="brand" href="/">Nugget assessor</a>'


def test_an_unknown_address_is_a_framed_404_with_a_way_home(organizer):
    response = organizer.get("/no/such/page/")
    text = response.content.decode()
    assert response.status_code == 404
    assert SITE_HEADER in text and HOME_LINK in text
    assert "There is no page at <code>/no/such/page/</code>." in text
    # The organizer's menu is there: the frame had the request's context.
    assert ">Topics</a>" in text


def test_an_organizer_page_opened_by_an_assessor_is_a_framed_403(client):
    client.force_login(make_user(Role.ASSESSOR))
    response = client.get(reverse("collection:topics"))
    text = response.content.decode()
    assert response.status_code == 403
    assert SITE_HEADER in text and HOME_LINK in text
    assert "This page is not for your role." in text


def test_the_500_page_renders_without_a_request_context():
    # Django's handler renders 500.html with no request: it must not need one.
    response = server_error(RequestFactory().get("/"))
    text = response.content.decode()
    assert response.status_code == 500
    assert SITE_HEADER in text and HOME_LINK in text
    assert "Something went wrong on the server" in text


def test_a_download_of_an_unknown_source_says_why_and_names_the_known_ones(organizer):
    make_qrel(make_topic(), make_segment(), grade=2, source="nist")
    response = organizer.get(reverse("collection:download_qrels", args=["nobody"]))
    assert response.status_code == 404
    assert "no qrels source named &#x27;nobody&#x27;; sources: nist" in response.content.decode()


def test_a_download_of_an_unknown_condition_says_why(organizer):
    response = organizer.get(reverse("collection:download_scores", args=["auto_edit", "nobody"]))
    assert response.status_code == 404
    assert "no assignment labels for nugget set &#x27;auto_edit&#x27; by assigner &#x27;nobody&#x27;" in (
        response.content.decode()
    )
