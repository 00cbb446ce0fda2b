"""What an organizer sees: the accounts page at work, the menu on one row, a disabled button that looks it,
the topic page's sections, error pages in the site's frame, deleting an upload, a job's one action, the call log."""

import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from assessor.models import Answer, AssessorWork, AuditEntry, Job, LabelSource, LLMCall, PromptTemplate, QrelSource, Run
from assessor.site.nav import organizer_links
from assessor.work.roles import Role
from assignment import kinds as assignment_kinds
from assignment.models import AssignmentLabel
from tests.builders import (
    make_answer,
    make_assignment_label,
    make_nugget_set,
    make_qrel,
    make_run,
    make_segment,
    make_topic,
    make_user,
)

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_organizer_adds_an_assessor_and_deactivates_them(open_as):
    organizer = make_user(Role.ORGANIZER, username="boss")
    page = open_as(organizer, reverse("accounts:list"))
    page.get_by_label("User name").fill("newcomer")
    page.get_by_role("button", name="Add the assessor").click()
    notice = page.locator(".messages li.success")
    expect(notice).to_have_text(
        re.compile(r"^Assessor newcomer added\. Its password is \w{14} \(shown once: pass it on now\)\.$")
    )
    row = page.locator('tr[data-user="newcomer"]')
    expect(row.locator("td").nth(1)).to_have_text("assessor")
    expect(row.locator("td").nth(2)).to_have_text("active")
    # Last logins in the site's one date format.
    expect(row.locator("td").nth(3)).to_have_text("never")
    boss_login = page.locator('tr[data-user="boss"] td').nth(3).inner_text()
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", boss_login), boss_login
    row.get_by_role("button", name="Deactivate").click()
    expect(page.locator(".messages li.success")).to_have_text("newcomer deactivated: it can no longer log in.")
    row = page.locator('tr[data-user="newcomer"]')
    expect(row.locator("td").nth(2)).to_have_text("deactivated")
    expect(row.get_by_role("button", name="Reactivate")).to_be_visible()
    # The audit trail on the page, newest first.
    trail = page.locator("table.audit tbody tr")
    assert [trail.nth(i).locator("td").nth(2).inner_text() for i in range(trail.count())] == [
        "account deactivated",
        "account created",
    ]
    assert not User.objects.get(username="newcomer").is_active
    assert AuditEntry.objects.count() == 2


@pytest.mark.parametrize("width", [1400, 1366])
def test_the_organizer_menu_fits_one_row(open_as, width):
    """1366 px is a common laptop's width: "Admin" wrapped alone onto a second row there."""
    organizer = make_user(Role.ORGANIZER, username="organizer-alice")
    page = open_as(organizer, "/")
    page.set_viewport_size({"width": width, "height": 800})
    entries = page.locator("nav.nav > a, nav.nav > details > summary")
    tops = {round(box["y"]) for box in (entry.bounding_box() for entry in entries.all()) if box}
    # Every destination the apps registered: the project's fourteen, the six giving pages in one group.
    assert page.locator("nav.nav a").count() == len(organizer_links()) == 14
    assert entries.count() == 9
    assert len(tops) == 1
    # The group opens on its links, below the header and in the window, and closes on Escape.
    group = page.locator("nav.nav details.nav-group")
    expect(group.locator("summary")).to_have_text("Assessors' work")
    work_links = group.locator(".nav-menu a")
    expect(work_links.first).not_to_be_visible()
    group.locator("summary").click()
    expect(work_links).to_have_text(
        ["Nugget work", "ManualAssign", "Support judging", "Preferences", "Grading", "ARGUE-style judging"]
    )
    for index in range(work_links.count()):
        expect(work_links.nth(index)).to_be_in_viewport()
    page.keyboard.press("Escape")
    expect(work_links.first).not_to_be_visible()
    group.locator("summary").click()
    work_links.filter(has_text="Support judging").click()
    expect(page).to_have_url(re.compile(reverse("support:organize") + "$"))
    expect(page.locator("nav.nav details.nav-group summary")).to_have_class("current")
    expect(page.locator("#who-am-i")).to_have_text("organizer-alice")
    expect(page.locator("#who-am-i")).to_have_attribute("title", "organizer-alice, signed in as organizer")


def test_the_pages_load_without_a_missing_file_and_link_the_endpoints_once(open_as, settings):
    """No favicon was a 404 on every session; the jobs page linked to the LLM endpoints twice."""
    settings.LLM_MODEL = ""
    settings.LLM_API_KEY = ""
    settings.LLM_BASE_URL = ""
    organizer = make_user(Role.ORGANIZER)
    page = open_as(organizer, "/")
    missing: list[str] = []
    page.on("response", lambda response: missing.append(response.url) if response.status >= 400 else None)
    page.goto(page.url.rstrip("/") + reverse("jobs:list"))
    page.wait_for_load_state("networkidle")
    assert missing == []
    icon = page.locator("link[rel=icon]")
    assert page.evaluate("(href) => fetch(href).then((r) => r.status)", icon.get_attribute("href")) == 200
    expect(page.locator(f"a[href='{reverse('jobs:endpoints')}']")).to_have_count(1)


def test_a_disabled_button_does_not_look_like_an_enabled_one(open_as, settings):
    settings.LLM_MODEL = ""
    settings.LLM_API_KEY = ""
    settings.LLM_BASE_URL = ""
    page = open_as(make_user(Role.ORGANIZER), reverse("jobs:launch", args=["auto_assign"]))
    queue = page.get_by_role("button", name="Queue the job")
    assert queue.is_disabled()

    def look(locator) -> list[str]:
        return locator.evaluate(
            "b => { const s = getComputedStyle(b); return [s.backgroundColor, s.color, s.cursor]; }"
        )

    disabled = look(queue)
    # A plain button of the site, enabled, on the same page.
    active_look = page.evaluate(
        """() => { const b = document.createElement('button'); document.querySelector('main').append(b);
                   const s = getComputedStyle(b); return [s.backgroundColor, s.color, s.cursor]; }"""
    )
    assert disabled[2] == "not-allowed"
    assert active_look[2] == "pointer"
    assert disabled[0] != active_look[0] and disabled[1] != active_look[1]


def test_the_topic_page_opens_with_its_nugget_sets_and_folds_the_segments_without_text(open_as, tmp_path):
    topic = make_topic("2024-7", query="why is the sky blue")
    for docid, text, grade in [("doc_a#1", "Rayleigh scattering.", 3), ("doc_c#1", "", 2), ("doc_d#1", "", 1)]:
        make_qrel(topic, make_segment(docid, text=text), grade=grade)
    make_nugget_set(topic, nuggets=[("light scatters", "vital")])
    make_answer(make_run("run01"), topic)
    page = open_as(make_user(Role.ORGANIZER), reverse("collection:topic", args=[topic.pk]))
    page.set_viewport_size({"width": 1400, "height": 900})
    sections = page.locator("nav.sections a")
    assert [" ".join(link.inner_text().split()) for link in sections.all()] == [
        "Nugget sets",
        "Relevant segments (3)",
        "Answers (1)",
    ]
    # The nuggets are the first thing under the heading, in the first screen.
    expect(page.get_by_text("light scatters")).to_be_visible()
    assert page.get_by_text("light scatters").bounding_box()["y"] < 900
    untexted = page.locator("details.untexted")
    assert untexted.locator("summary").inner_text() == "2 relevant segments with no text in the collection"
    expect(page.get_by_text("doc_c#1")).to_be_hidden()
    page.screenshot(path=str(tmp_path / "topic.png"), full_page=True, timeout=30_000)
    untexted.locator("summary").click()
    expect(page.get_by_text("doc_c#1")).to_be_visible()
    sections.nth(1).click()
    page.wait_for_url("**#segments")


def test_an_error_page_says_why_in_the_sites_frame_with_a_way_home(open_as, tmp_path):
    organizer = make_user(Role.ORGANIZER)
    page = open_as(organizer, "/no/such/page/")
    expect(page.locator("h1")).to_have_text("Not found")
    assert page.locator("nav.nav a").count() == len(organizer_links())  # the organizer's menu: the site's frame
    page.get_by_role("link", name="Back to the home page").click()
    page.wait_for_url("**/")

    page = open_as(organizer, reverse("collection:download_scores", args=["auto_edit", "nobody"]), page.context)
    reason = page.locator(".error-page").inner_text()
    assert "no assignment labels for nugget set 'auto_edit' by assigner 'nobody'" in reason
    page.screenshot(path=str(tmp_path / "download-404.png"))

    page = open_as(make_user(Role.ASSESSOR), reverse("collection:upload"))
    expect(page.locator("h1")).to_have_text("This page is not for you")
    expect(page.get_by_role("link", name="Back to the home page")).to_be_visible()
    page.screenshot(path=str(tmp_path / "403.png"))


def test_an_upload_made_by_mistake_is_deleted_after_a_confirmation_and_audited(open_as, tmp_path):
    topic = make_topic()
    make_qrel(topic, make_segment(), grade=2, source="mistake")
    make_qrel(topic, make_segment(), grade=1, source="nist")
    organizer = make_user(Role.ORGANIZER, username="boss")
    page = open_as(organizer, reverse("collection:upload"))
    page.locator('table.uploads[data-kind="qrels"] tr[data-name="mistake"]').get_by_role("link", name="Delete…").click()
    expect(page.locator("main")).to_contain_text("all it holds: 1 grade")
    page.screenshot(path=str(tmp_path / "confirm.png"))
    page.get_by_role("link", name="Keep it").click()
    assert QrelSource.objects.filter(name="mistake").exists()
    page.locator('tr[data-name="mistake"]').get_by_role("link", name="Delete…").click()
    page.get_by_role("button", name="Delete mistake").click()
    expect(page.locator(".messages li")).to_have_text("Deleted the qrels source mistake (1 grade).")
    expect(page.locator('tr[data-name="mistake"]')).to_have_count(0)
    assert list(QrelSource.objects.values_list("name", flat=True)) == ["nist"]
    page.goto(page.url.split("/collection/")[0] + reverse("accounts:list"))
    first = page.locator("table.audit tbody tr").first
    expect(first).to_contain_text("qrels source mistake")
    expect(first).to_contain_text("boss")


def test_a_job_shows_cancel_while_it_runs_and_resume_once_it_stopped(open_as):
    organizer = make_user(Role.ORGANIZER)
    running = Job.objects.create(kind=assignment_kinds.AUTO_ASSIGN, output_name="a", status=Job.Status.RUNNING)
    stopped = Job.objects.create(kind=assignment_kinds.AUTO_ASSIGN, output_name="b", status=Job.Status.CANCELLED)
    done = Job.objects.create(kind=assignment_kinds.AUTO_ASSIGN, output_name="c", status=Job.Status.DONE)

    def actions(job: Job) -> list[str]:
        page = open_as(organizer, reverse("jobs:detail", args=[job.pk]))
        return [b.inner_text() for b in page.locator("#progress button").all() if b.is_visible()]

    assert actions(running) == ["Cancel"]
    assert actions(stopped) == ["Resume"]
    assert actions(done) == []


def test_an_opened_call_log_message_wraps_inside_the_page(open_as, tmp_path):
    job = Job.objects.create(kind=assignment_kinds.AUTO_ASSIGN, output_name="a", status=Job.Status.DONE)
    prompt = PromptTemplate.objects.create(name="assign", version=1, system="s", user="u")
    long_line = " ".join(f"word{i}" for i in range(400))
    LLMCall.objects.create(
        job=job, prompt=prompt, model="m", messages=[{"role": "user", "content": long_line}], raw_response="[]"
    )
    page = open_as(make_user(Role.ORGANIZER), reverse("jobs:calls", args=[job.pk]))
    page.set_viewport_size({"width": 1400, "height": 900})
    page.get_by_text("show").click()
    message = page.locator("table.call-log pre").first
    expect(message).to_be_visible()
    box = message.bounding_box()
    assert box["x"] + box["width"] <= 1400
    # Every word shows: the text wraps instead of running out of its box.
    assert message.evaluate("el => el.scrollWidth <= el.clientWidth + 1")
    assert box["height"] > 100
    page.screenshot(path=str(tmp_path / "call-log.png"), full_page=True, timeout=30_000)


def test_a_failed_upload_names_the_line_and_keeps_the_kind_and_options(open_as, tmp_path, upload_worker):
    make_topic("2024-1")
    bad = tmp_path / "grades.txt"
    bad.write_text("2024-1 Q0 doc#1 2\n2024-1 Q0 doc#2 nine\n")
    page = open_as(make_user(Role.ORGANIZER), reverse("collection:upload"))
    page.get_by_label("Kind of file").select_option("qrels")
    options = page.locator("fieldset.options:visible")
    expect(options.locator("legend")).to_have_text(["Options for qrels"])
    options.locator("input[type=text]").first.fill("mine")
    page.locator("input[type=file]").set_input_files(str(bad))
    page.get_by_role("button", name="Import").click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("Nothing was imported.")
    assert [dd.inner_text() for dd in alert.locator("dd").all()] == [
        "grades.txt",
        "2",
        "grade",
        "not an integer: 'nine'",
    ]
    page.screenshot(path=str(tmp_path / "upload-failed.png"), full_page=True, timeout=30_000)
    # The kind and the source are as chosen; the file is asked for again, by name.
    assert page.get_by_label("Kind of file").input_value() == "qrels"
    assert page.locator("fieldset.options:visible input[type=text]").first.input_value() == "mine"
    assert "(choose grades.txt again, or another)" in page.locator("#upload-form").inner_text()
    assert QrelSource.objects.filter(name="mine").count() == 0


def test_refusals_on_the_pages_speak_of_names_and_nugget_sets_not_command_line_options(open_as, settings):
    settings.LLM_MODEL, settings.LLM_API_KEY, settings.LLM_BASE_URL = "m", "k", "http://127.0.0.1:9/v1"
    topic = make_topic("2024-1", "why bees see ultraviolet")
    make_nugget_set(topic, name="nist")
    taken = Job.objects.create(
        kind=assignment_kinds.AUTO_ASSIGN,
        output_name="taken",
        output_family="assignment",
        status=Job.Status.DONE,
        model="m",
        endpoint_name="default",
    )
    make_user(Role.ASSESSOR, username="bob")
    organizer = make_user(Role.ORGANIZER)

    page = open_as(organizer, reverse("jobs:launch", args=["auto_assign"]))
    page.get_by_label("Name").fill("taken")
    page.get_by_role("button", name="Queue the job").click()
    refusal = page.get_by_text("choose another name").inner_text()
    assert refusal == (
        f"Job {taken.pk} (m of the endpoint 'default') already produces 'taken': "
        f"choose another name, or resume job {taken.pk}."
    )

    page = open_as(organizer, reverse("nuggets:organize"), page.context)
    page.get_by_role("checkbox", name="2024-1").check()
    page.get_by_label("Assessor").select_option(label="bob")
    page.get_by_label("Condition").select_option("auto_edit")
    page.get_by_role("button", name="Give").click()
    refusal = page.get_by_text("has no draft nuggets").inner_text()
    assert "import draft nuggets for it or generate them with an AutoNuggets job first" in refusal
    assert "import_nuggets" not in refusal and "--" not in refusal


def test_the_topic_page_draws_provisional_and_stale_labels_apart_and_says_what_they_mean(open_as, tmp_path):
    topic = make_topic("2024-8", query="why is the sky blue")
    nugget_set = make_nugget_set(topic, nuggets=[("light scatters", "vital"), ("blue scatters most", "okay")])
    first, second = nugget_set.nuggets.order_by("position")
    answer = make_answer(make_run("run01"), topic, [("Light scatters; blue most of all.", [])])
    make_assignment_label(answer, first, "support", assigner="nist")
    make_assignment_label(answer, second, "partial_support", assigner="nist")
    # An LLM assigner labelled the first nugget; the second changed since it labelled the list.
    make_assignment_label(answer, first, "support", assigner="gpt", kind="auto")
    LabelSource.objects.filter(family="assignment", name="gpt").update(
        kind=LabelSource.Kind.LLM, stale={nugget_set.name: {topic.pk: [second.pk]}}
    )
    # A person's label in work still open.
    work = AssessorWork.objects.create(
        topic=topic, assessor=make_user(), kind=assignment_kinds.ASSIGN_MANUAL, nugget_set_name="manual"
    )
    AssignmentLabel.objects.filter(pk=make_assignment_label(answer, first, "not_support", assigner="alice").pk).update(
        work=work
    )
    page = open_as(make_user(Role.ORGANIZER), reverse("collection:topic", args=[topic.pk]) + "#answers")
    page.set_viewport_size({"width": 1280, "height": 800})
    legend = page.locator("p.badge-legend")
    assert legend.is_visible() and legend.bounding_box()["y"] < 800
    stale = page.locator("span.badge.stale", has_text="2-")
    provisional = page.locator("span.badge.provisional", has_text="1N")
    for badge in (stale, provisional):
        badge.scroll_into_view_if_needed()
        box = badge.bounding_box()
        assert box and 0 <= box["y"] < 800
    assert stale.evaluate("e => getComputedStyle(e).textDecorationLine") == "line-through"
    assert provisional.evaluate("e => getComputedStyle(e).borderTopStyle") == "dashed"
    assert page.locator("span.badge.support:not(.provisional):not(.stale)", has_text="1S").count() == 2
    page.screenshot(path=str(tmp_path / "topic-states.png"), full_page=True, timeout=30_000)


def test_joining_runs_that_answer_a_topic_differently_asks_whose_answer_stays(open_as, tmp_path):
    topic, other = make_topic("2024-9"), make_topic("2024-10")
    make_answer(make_run("team.split"), topic, [("One answer.", [])])
    make_answer(make_run("split-other"), topic, [("A different answer.", [])])
    make_answer(Run.objects.get(run_id="split-other"), other, [("Only here.", [])])
    page = open_as(
        make_user(Role.ORGANIZER), reverse("collection:run_join", args=["team.split"]) + "?merge=split-other"
    )
    page.set_viewport_size({"width": 1280, "height": 800})
    choice = page.get_by_role("radio", name=re.compile(r"split-other \(3 words; sentences: 1"))
    assert choice.is_visible() and choice.bounding_box()["y"] < 800
    page.screenshot(path=str(tmp_path / "join.png"), full_page=True)
    choice.check()
    page.get_by_role("button", name="Join split-other into team.split").click()
    page.wait_for_url("**" + reverse("collection:run", args=["team.split"]))
    assert "answers set aside in the history (2024-9: team.split's)" in page.locator("main").inner_text()
    assert Answer.objects.get(topic=topic).text == "A different answer."


def test_manual_assign_is_given_on_a_list_chosen_among_the_topics_lists(open_as):
    """Every demo topic has two lists: the name typed as free text was refused at the first try, and so was the
    form's default ("the topic's only list") when it was offered on topics with several."""
    topic = make_topic("2024-1", query="how do bees see")
    other = make_topic("2024-2", query="how do ants see")
    make_answer(make_run("r1"), topic)
    make_answer(make_run("r2"), other)
    make_nugget_set(topic, texts=["Bees see ultraviolet"], kind="manual", name="manual")
    make_nugget_set(topic, texts=["Bees see colours"], kind="auto_edit", name="nist")
    make_nugget_set(other, texts=["Ants see polarised light"], kind="auto_edit", name="nist")
    third = make_topic("2024-3", query="how do flies see")
    make_answer(make_run("r3"), third)
    make_nugget_set(third, texts=["Flies see fast"], kind="manual", name="manual")
    make_nugget_set(third, texts=["Flies see motion"], kind="auto_edit", name="nist")
    bob = make_user(Role.ASSESSOR, username="bob")
    carol = make_user(Role.ASSESSOR, username="carol")
    page = open_as(make_user(Role.ORGANIZER), reverse("judge:organize"))
    lists = page.get_by_label("Nugget list")
    # No "only list" to guess on topics with two: the list on the most topics is chosen when the form opens.
    expect(lists.locator("option")).to_have_text(["manual (on 2 topics)", "nist (on 3 topics)"])
    expect(lists).to_have_value("nist")
    lists.scroll_into_view_if_needed()
    expect(lists).to_be_in_viewport()
    # The defaults, as the form opens, give work that is accepted.
    page.get_by_role("checkbox", name="2024-1").check()
    page.get_by_label("Assessor").select_option(label="carol")
    page.get_by_role("button", name="Give").click()
    expect(page.locator("body")).not_to_contain_text("several nugget lists")
    expect(page.get_by_text("ManualAssign given to carol: 2024-1.")).to_be_visible()
    given = AssessorWork.objects.get(assessor=carol)
    assert (given.kind, given.topic_id, given.nugget_set_name) == (assignment_kinds.ASSIGN_MANUAL, "2024-1", "nist")
    # Another list is chosen among the topic's.
    page.get_by_role("checkbox", name="2024-3").check()
    page.get_by_label("Assessor").select_option(label="bob")
    lists.select_option("manual")
    page.get_by_role("button", name="Give").click()
    expect(page.locator("body")).not_to_contain_text("several nugget lists")
    expect(page.get_by_text("ManualAssign given to bob: 2024-3.")).to_be_visible()
    work = AssessorWork.objects.get(assessor=bob)
    assert (work.kind, work.topic_id, work.nugget_set_name) == (assignment_kinds.ASSIGN_MANUAL, "2024-3", "manual")


def test_manual_assign_offers_the_topics_only_list_while_no_topic_has_two(open_as):
    topic = make_topic("2024-1", query="how do bees see")
    make_answer(make_run("r1"), topic)
    make_nugget_set(topic, texts=["Bees see ultraviolet"], kind="manual", name="manual")
    make_nugget_set(make_topic("2024-2", query="how do ants see"), texts=["Ants see"], kind="auto_edit", name="nist")
    bob = make_user(Role.ASSESSOR, username="bob")
    page = open_as(make_user(Role.ORGANIZER), reverse("judge:organize"))
    lists = page.get_by_label("Nugget list")
    expect(lists.locator("option")).to_have_text(["the topic's only list", "manual (on 1 topic)", "nist (on 1 topic)"])
    expect(lists).to_have_value("")
    page.get_by_role("checkbox", name="2024-1").check()
    page.get_by_label("Assessor").select_option(label="bob")
    page.get_by_role("button", name="Give").click()
    expect(page.get_by_text("ManualAssign given to bob: 2024-1.")).to_be_visible()
    work = AssessorWork.objects.get(assessor=bob)
    assert (work.topic_id, work.nugget_set_name) == ("2024-1", "manual")


def test_a_cancelled_job_with_items_in_flight_says_so_where_its_figures_are(open_as):
    from assessor.jobs.engine import job_cancel
    from assessor.models import JobItem

    job = Job.objects.create(kind=assignment_kinds.AUTO_ASSIGN, output_name="auto", status=Job.Status.RUNNING)
    for index, status in enumerate([JobItem.Status.CLAIMED] * 8 + [JobItem.Status.DONE] * 2):
        JobItem.objects.create(job=job, key=f"item-{index}", status=status)
    job_cancel(job.pk)
    page = open_as(make_user(Role.ORGANIZER), reverse("jobs:detail", args=[job.pk]))
    progress = page.locator("#progress")
    expect(progress).to_be_in_viewport()
    expect(progress).to_contain_text("cancelled")
    expect(progress).not_to_contain_text("finished")
    expect(page.locator("#in-flight")).to_have_text("8 items still in flight: they finish on their own")
    # The worker writes them: the panel, which kept asking, says so without a reload.
    JobItem.objects.filter(job=job, status=JobItem.Status.CLAIMED).update(status=JobItem.Status.DONE)
    expect(page.locator("#in-flight")).to_have_count(0)
