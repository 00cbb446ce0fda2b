"""Campaigns' foundation: stored keys, the scope and its managers, the `campaign` command, `--campaign`, and pages
under /c/<slug>/ (assessor.campaigns)."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import get_script_prefix, reverse

from assessor.campaigns.services import CampaignRefused, campaign_create
from assessor.models import Campaign, CampaignMember, LabelSource, Run, Topic
from assessor.models.keys import TopicIdRefused, published_id, topic_id_checked, topic_key
from assessor.models.scope import (
    CampaignRequired,
    campaign_first,
    campaign_in_effect,
    campaign_scope,
    scoped_campaign,
)
from assessor.work.prepared import Prepared
from assessor.work.roles import Role
from assessor.work.services import work_give
from tests.builders import REPO, make_user

FIXTURES = REPO / "tests" / "fixtures" / "collection"
TOPICS, SEGMENTS, QRELS = FIXTURES / "topics.tsv", FIXTURES / "segments.jsonl", FIXTURES / "qrels.txt"


def _qrels(path) -> set[tuple[str, str, str]]:
    """(topic, segment, grade) of each line: the files may differ in the iteration column ("0", "Q0")."""
    return {
        (topic, docid, grade) for topic, _, docid, grade in (line.split() for line in path.read_text().splitlines())
    }


def _topic_ids() -> list[str]:
    return [line.split("\t", 1)[0] for line in TOPICS.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture
def main(db) -> Campaign:
    return campaign_first()  # the database's first campaign (made again after a flush)


@pytest.fixture
def second(db) -> Campaign:
    return campaign_create(slug="neuclir-2025", title="NeuCLIR 2025", families=["reports"])


def out(*args, **options) -> str:
    stdout = StringIO()
    call_command(*args, stdout=stdout, **options)
    return stdout.getvalue()


# --- keys ---------------------------------------------------------------------------------------


def test_first_campaign_keeps_ids_and_the_others_suffix_their_slug(main, second):
    assert main.key_suffix == ""
    assert second.key_suffix == "@neuclir-2025"
    assert topic_key("300", main) == "300"
    assert topic_key("300", second) == "300@neuclir-2025"
    assert published_id("300@neuclir-2025") == "300"
    assert published_id("2024-145979") == "2024-145979"


def test_a_topic_id_holding_the_separator_is_refused():
    assert topic_id_checked("2024-145979") == "2024-145979"
    with pytest.raises(TopicIdRefused, match="'300@x'"):
        topic_id_checked("300@x")


# --- the scope and its managers ----------------------------------------------------------------


def test_the_same_ids_in_two_campaigns_are_two_rows_each_seen_in_its_own(main, second):
    with campaign_scope(main):
        Topic.objects.create(id=topic_key("300"), query="main's")
        Run.objects.create(run_id="baseline")
    with campaign_scope(second):
        Topic.objects.create(id=topic_key("300"), query="second's")
        Run.objects.create(run_id="baseline")
        assert [(t.pk, t.query, str(t)) for t in Topic.objects.all()] == [("300@neuclir-2025", "second's", "300")]
        assert Run.objects.get(run_id="baseline").campaign_id == second.pk
        assert Topic.objects.unscoped().count() == 2
    with campaign_scope(main):
        assert list(Topic.objects.values_list("query", flat=True)) == ["main's"]
    # Outside a scope every campaign's rows are read.
    assert Run.objects.filter(run_id="baseline").count() == 2


def test_outside_a_scope_a_new_row_goes_to_the_only_campaign_and_with_two_is_refused(main):
    assert Run.objects.create(run_id="r1").campaign_id == main.pk
    campaign_create(slug="b", title="B")
    with pytest.raises(CampaignRequired):
        Run.objects.create(run_id="r2")
    assert scoped_campaign() is None


def test_an_empty_database_starts_with_its_first_campaign(db):
    Campaign.objects.all().delete()
    campaign = campaign_in_effect()
    assert (campaign.slug, campaign.key_suffix) == ("main", "")


def test_user_set_role_makes_the_person_a_member_of_the_campaign_in_effect(main, second):
    with campaign_scope(second):
        person = make_user(Role.ASSESSOR)
    assert list(CampaignMember.objects.filter(user=person).values_list("campaign__slug", flat=True)) == ["neuclir-2025"]


# --- the campaign command ---------------------------------------------------------------------------


def test_campaign_add_show_list_close_reopen_members(main):
    assert "Created campaign trec-2025 (TREC 2025 RAG)." in out(
        "campaign", "add", "trec-2025", "--title", "TREC 2025 RAG", "--family", "rag", "--word-limit", "400",
        "--reference-cap", "20",
    )  # fmt: skip
    made = Campaign.objects.get(slug="trec-2025")
    assert (made.families, made.answer_word_limit, made.answer_reference_cap) == (["rag"], 400, 20)
    person = make_user(Role.ORGANIZER, username="olga")
    assert "Added 1 of 1 to trec-2025" in out("campaign", "members", "trec-2025", "olga")
    assert "Added 0 of 1 to trec-2025" in out("campaign", "members", "trec-2025", "olga")
    shown = out("campaign", "show", "trec-2025")
    assert "word limit:   400" in shown and "references:   20" in shown and "families:     rag" in shown
    assert "organizers:   1" in shown and "state:        open" in shown
    listed = out("campaign", "list").splitlines()
    assert [line.split("\t")[0] for line in listed] == ["main", "trec-2025"]
    assert "Closed trec-2025." in out("campaign", "close", "trec-2025")
    assert "was closed already" in out("campaign", "close", "trec-2025")
    assert Campaign.objects.get(slug="trec-2025").is_closed
    assert "Reopened trec-2025." in out("campaign", "reopen", "trec-2025")
    assert CampaignMember.objects.filter(campaign=made, user=person).exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["main", "--title", "again"], "there is a campaign 'main' already"),
        (["Upper", "--title", "x"], "the slug 'Upper'"),
        (["x", "--title", "x", "--family", "rag", "--word-limit", "0"], "--word-limit: at least 1"),
        (["x", "--title", "  "], "a campaign needs a title"),
    ],
)
def test_campaign_add_refusals_create_nothing(main, arguments, message):
    with pytest.raises(CommandError, match=message):
        call_command("campaign", "add", *arguments)
    assert Campaign.objects.count() == 1


def test_campaign_create_refuses_an_unknown_family(db):
    with pytest.raises(CampaignRefused, match="unknown family ragged: choose among rag, reports"):
        campaign_create(slug="x", title="x", families=["ragged"])


def test_campaign_members_names_an_unknown_account(main):
    with pytest.raises(CommandError, match="No account nobody"):
        call_command("campaign", "members", "main", "nobody")


# --- --campaign -------------------------------------------------------------------------------------


def test_commands_work_in_the_campaign_named_and_need_one_once_there_are_two(main, second):
    out("import_topics", str(TOPICS), campaign="main")
    ids = _topic_ids()
    assert sorted(Topic.objects.filter(campaign=main).values_list("pk", flat=True)) == sorted(ids)
    with pytest.raises(CommandError, match=r"several campaigns: name one with --campaign \(main, neuclir-2025\)"):
        call_command("export_run", "--run", "nothing")
    with pytest.raises(CommandError, match="No campaign 'nope': there is main, neuclir-2025"):
        call_command("import_topics", str(TOPICS), campaign="nope")


def test_a_closed_campaign_refuses_imports_but_still_exports(main, tmp_path):
    out("import_topics", str(TOPICS))
    out("import_segments", str(SEGMENTS))
    out("import_qrels", str(QRELS), "--source", "nist")
    call_command("campaign", "close", "main")
    with pytest.raises(CommandError, match="The campaign 'main' is closed"):
        call_command("import_qrels", str(QRELS), "--source", "nist")
    call_command("export_qrels", "--source", "nist", "--output", str(tmp_path / "q.txt"))
    assert _qrels(tmp_path / "q.txt") == _qrels(QRELS)


# --- pages under /c/<slug>/ -----------------------------------------------------------------------


def _organizer_of(*campaigns: Campaign):
    person = make_user(Role.ORGANIZER)
    CampaignMember.objects.filter(user=person).delete()
    for campaign in campaigns:
        CampaignMember.objects.create(campaign=campaign, user=person)
    return person


def test_a_campaign_page_is_its_members_and_builds_its_urls_inside_it(client, main, second):
    client.force_login(_organizer_of(second))
    topics = reverse("collection:topics")
    page = client.get(f"/c/neuclir-2025{topics}")
    assert page.status_code == 200
    assert f'href="/c/neuclir-2025{reverse("collection:runs")}"' in page.content.decode()
    # Outside the request, URLs are the site's again.
    assert get_script_prefix() == "/"
    assert client.get(f"/c/main{topics}").status_code == 404
    assert client.get(f"/c/no-such{topics}").status_code == 404


def test_without_a_campaign_in_the_url_an_organizer_page_goes_to_the_current_campaign(client, main, second):
    person = _organizer_of(main, second)
    client.force_login(person)
    topics = reverse("collection:topics")
    assert client.get(topics + "?q=1").url == f"/c/main{topics}?q=1"
    client.get(f"/c/neuclir-2025{topics}")  # the campaign worked in last is the current one
    assert client.get(topics).url == f"/c/neuclir-2025{topics}"
    assert client.post(topics).status_code == 404


def test_with_one_campaign_pages_work_without_a_prefix(client, main):
    client.force_login(make_user(Role.ORGANIZER))
    assert client.get(reverse("collection:topics")).status_code == 200


def test_an_organizer_of_no_campaign_sees_none_and_an_admin_sees_all(client, main, second):
    client.force_login(_organizer_of())
    topics = reverse("collection:topics")
    assert client.get(topics).status_code == 404
    assert client.get(f"/c/main{topics}").status_code == 404
    admin = make_user(Role.ADMIN)
    CampaignMember.objects.filter(user=admin).delete()
    client.force_login(admin)
    assert client.get(f"/c/main{topics}").status_code == 200
    assert client.get(f"/c/neuclir-2025{topics}").status_code == 200


def test_a_stranger_is_sent_to_log_in_and_back_into_the_campaign(client, main):
    topics = reverse("collection:topics")
    answer = client.get(f"/c/main{topics}")
    assert answer.status_code == 302
    assert "next=/c/main" + topics in answer.url.replace("%2F", "/")


def test_a_query_written_once_inside_a_campaign_serves_every_campaign(main, second):
    """A prepared read (assessor.work.prepared) is compiled once: inside a campaign it must not keep that campaign."""
    prepared = Prepared(lambda pk: Run.objects.filter(pk=pk).values_list("run_id"), int)
    with campaign_scope(main):
        first = Run.objects.create(run_id="a")
    with campaign_scope(second):
        other = Run.objects.create(run_id="b")
    with campaign_scope(main):
        assert list(prepared.first(first.pk)) == ["a"]
    with campaign_scope(second):
        assert list(prepared.first(other.pk)) == ["b"]


def test_a_download_names_its_campaign_and_holds_the_ids_as_the_files_give_them(client, main, second):
    for campaign in (main, second):
        out("import_topics", str(TOPICS), campaign=campaign.slug)
        out("import_segments", str(SEGMENTS), campaign=campaign.slug)
        out("import_qrels", str(QRELS), "--source", "nist", campaign=campaign.slug)
    client.force_login(_organizer_of(second))
    answer = client.get("/c/neuclir-2025" + reverse("collection:download_qrels", args=["nist"]))
    assert answer["Content-Disposition"] == 'attachment; filename="neuclir-2025.qrels.nist.txt"'
    lines = b"".join(answer.streaming_content).decode().splitlines()
    assert {(topic, docid, grade) for topic, _, docid, grade in (line.split() for line in lines)} == _qrels(QRELS)


def test_a_topic_id_too_long_for_a_campaigns_suffix_is_refused_by_file_line_and_field(main, second, tmp_path):
    long_id = "t" * 60
    topics = tmp_path / "topics.tsv"
    topics.write_text(f"{long_id}\ta query\n", encoding="utf-8")
    out("import_topics", str(topics), campaign="main")  # 60 characters fit the first campaign's keys
    with pytest.raises(CommandError, match=r"topics.tsv, line 1, field 'topic_id': the topic id 't{60}' is too long"):
        call_command("import_topics", str(topics), campaign="neuclir-2025")
    assert not Topic.objects.filter(campaign=second).exists()


def test_an_answers_limits_are_its_campaigns_rules(main, tmp_path):
    """The first campaign keeps TREC 2024 RAG's 20 references; a campaign with no cap takes 21, one of 2 refuses 3."""
    open_rules = campaign_create(slug="open", title="No caps")
    tight = campaign_create(slug="tight", title="Two references", answer_reference_cap=2, answer_word_limit=3)
    references = [f"doc{i}" for i in range(21)]
    line = {
        "run_id": "r", "topic_id": "t1", "topic": "q",
        "references": references, "answer": [{"text": "one two three four", "citations": [0]}],
    }  # fmt: skip
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps(line) + "\n", encoding="utf-8")
    for campaign in (main, open_rules, tight):
        with campaign_scope(campaign):
            Topic.objects.create(id=topic_key("t1"), query="q")
    with pytest.raises(CommandError, match="21 references, the campaign's rules allow at most 20"):
        call_command("import_run", str(run), campaign="main")
    assert "over the campaign" not in out("import_run", str(run), campaign="open")
    with pytest.raises(CommandError, match="21 references, the campaign's rules allow at most 2"):
        call_command("import_run", str(run), campaign="tight")
    line["references"] = references[:2]
    run.write_text(json.dumps(line) + "\n", encoding="utf-8")
    stderr = StringIO()
    call_command("import_run", str(run), campaign="tight", stdout=StringIO(), stderr=stderr)
    assert "has 4 words, over the campaign's 3" in stderr.getvalue()


def test_an_assessor_given_a_campaigns_work_becomes_its_member(main, second):
    with campaign_scope(second):
        topic = Topic.objects.create(id=topic_key("300"), query="q")
        source = LabelSource.objects.create(family="nuggets", name="manual", kind=LabelSource.Kind.PERSON)
    person = make_user(Role.ASSESSOR)  # two campaigns, none in effect: a member of neither
    assert not CampaignMember.objects.filter(user=person).exists()
    work_give(topic=topic, assessor=person, kind="verdict", by=None, source=source)
    assert list(CampaignMember.objects.filter(user=person).values_list("campaign__slug", flat=True)) == [second.slug]


def test_a_related_manager_reads_the_rows_of_its_instance_inside_a_campaign(main, second):
    """Django makes `topic.work` of AssessorWork's manager class without its path (topic__campaign)."""
    with campaign_scope(second):
        topic = Topic.objects.create(id=topic_key("300"), query="q")
        source = LabelSource.objects.create(family="nuggets", name="manual", kind=LabelSource.Kind.PERSON)
        work = work_give(topic=topic, assessor=make_user(Role.ASSESSOR), kind="verdict", by=None, source=source)
        assert list(topic.work.all()) == [work]
        assert list(second.topics.all()) == [topic]
