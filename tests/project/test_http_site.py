"""What the deployment test and bench_load read off the pages: the judging page's label forms, as
its script reads them, and the percentiles bench_load prints."""

import uuid

from django.urls import reverse

from bench.http_site import label_forms
from bench.management.commands.bench_load import TIMING_MARK, percentile, save_times_served
from tests.scenarios import give_assign


def test_the_label_forms_of_a_judging_page_post_as_the_script_posts_them(client, scenario):
    work = give_assign(scenario)
    client.force_login(scenario.assessor)
    page = client.get(reverse("judge:answer", args=[work.pk, 1]))

    forms, csrf = label_forms(page.content.decode())

    assert [form.fields["nugget"] for form in forms] == [str(nugget.pk) for nugget in scenario.nuggets]
    assert {form.action for form in forms} == {reverse("judge:label", args=[work.pk, 1])}
    assert all(set(form.fields) == {"version", "answer", "nugget", "previous"} for form in forms)
    assert forms[0].fields["version"] == str(work.version) and forms[0].fields["previous"] == ""
    assert csrf
    client.handler.enforce_csrf_checks = True
    fields = {**forms[0].fields, "label": "support", "op_id": str(uuid.uuid4())}
    assert client.post(forms[0].action, fields, HTTP_ACCEPT="application/json").status_code == 403
    saved = client.post(forms[0].action, fields, HTTP_X_CSRFTOKEN=csrf, HTTP_ACCEPT="application/json")
    assert saved.status_code == 200 and saved.json()["label"] == "support"


def test_percentiles_are_nearest_rank():
    hundred = [float(value) for value in range(100, 0, -1)]
    assert (percentile(hundred, 0.50), percentile(hundred, 0.95), percentile(hundred, 0.99)) == (50.0, 95.0, 99.0)
    assert percentile([10.0, 20.0, 30.0], 0.50) == 20.0
    assert percentile([10.0, 20.0, 30.0], 0.95) == 30.0
    assert percentile([7.0], 0.99) == 7.0


def test_the_save_times_are_read_from_gunicorns_access_log():
    log = "\n".join(
        [
            "[2026-01-01 00:00:00 +0000] [1] [INFO] Booting worker with pid: 2",
            f"{TIMING_MARK} GET /judge/assign/3/answer/1/ 200 41000",
            f"{TIMING_MARK} POST /judge/assign/3/answer/1/label/ 200 12500",
            f"{TIMING_MARK} POST /login/ 302 300000",
            f"{TIMING_MARK} POST /judge/assign/4/answer/2/label/ 409 8000",
        ]
    )
    assert save_times_served(log) == [12.5, 8.0]
