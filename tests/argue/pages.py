"""The ARGUE-style sentence pages as the tests drive them: a logged-in client, a page's rows, a judgment posted."""

import re

from django.test import Client
from django.urls import reverse

SCRIPT = {"HTTP_ACCEPT": "application/json"}  # how the page's script asks for JSON


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def page_of(client, work, number) -> str:
    return client.get(reverse("argue:sentence", args=[work.pk, number])).content.decode()


def rows_of(page: str) -> list[str]:
    return re.findall(r'name="row" value="([^"]+)"', page)


def post(client, work, number, row, label, previous="", page=None, **extra):
    page = page or page_of(client, work, number)
    fields = {
        "label": label,
        "previous": previous,
        "row": row,
        "answer": re.search(r'name="answer" value="([0-9a-f]+)"', page).group(1),
        "sentence": re.search(r'name="sentence" value="(\d+)"', page).group(1),
        "version": re.search(r'name="version" value="(\d+)"', page).group(1),
        **extra,
    }
    return client.post(reverse("argue:label", args=[work.pk, number]), fields, **SCRIPT)


def judge_all(client, work, labels: list[list[str]]) -> None:
    """Each page's rows in order, answered as given."""
    for number, page_labels in enumerate(labels, start=1):
        page = page_of(client, work, number)
        rows = rows_of(page)
        assert len(rows) == len(page_labels)
        for row, label in zip(rows, page_labels, strict=True):
            assert post(client, work, number, row, label, page=page).status_code == 200
