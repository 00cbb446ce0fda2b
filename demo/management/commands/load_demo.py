"""Load the demo dataset of demo/data and the demo accounts.

The demo is two campaigns: "TREC 2024 RAG (demo)", four TREC 2024 RAG topics
as NIST judged them, and "Rag4Reports kiddie", the report family's small
collection. Every step is an ordinary import of a file into its campaign
(`--campaign`), in the order the data depends on (topics and segments before
the grades and answers that name them), so a second run adds nothing.
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from argue import kinds as argue_kinds
from argue.judging import argue_work_give
from assessor.campaigns.services import campaign_create, members_add
from assessor.importing.base import statistics_refresh
from assessor.models import AssessorWork, Campaign, Topic
from assessor.models.keys import topic_key
from assessor.models.scope import FIRST_SLUG, FIRST_TITLE, campaign_scope
from assessor.registry import registry
from assessor.work.roles import Role, user_set_role
from grades import kinds as grade_kinds
from grades.judging import grade_work_give
from nuggets import kinds as nugget_kinds
from nuggets.giving import nugget_work_give
from nuggets.models import NuggetSet
from preferences import kinds as preference_kinds
from support import kinds as support_kinds

DEMO_DIR = Path(__file__).resolve().parents[2] / "data"


@dataclass(frozen=True)
class DemoAccount:
    username: str
    password: str
    role: Role


DEMO_ACCOUNTS = (
    DemoAccount("organizer", "organizer-demo", Role.ORGANIZER),
    DemoAccount("assessor1", "assessor-demo", Role.ASSESSOR),
    DemoAccount("assessor2", "assessor-demo", Role.ASSESSOR),
)


@dataclass(frozen=True)
class DemoCampaign:
    slug: str
    title: str
    families: tuple[str, ...]
    answer_word_limit: int | None = None
    answer_reference_cap: int | None = None


# The TREC 2024 RAG track's rules (an answer of at most 400 words citing at most 20 references); the report
# requests carry their own length limits.
TREC_DEMO = DemoCampaign("trec-2024-rag-demo", "TREC 2024 RAG (demo)", ("rag",), 400, 20)
KIDDIE_DEMO = DemoCampaign("rag4reports-kiddie", "Rag4Reports kiddie", ("reports",))
DEMO_CAMPAIGNS = (TREC_DEMO, KIDDIE_DEMO)

# NIST's labels are imported under names of their own: the names of the
# conditions (manual, scratch, postedit) stay free for the demo assessors' work.
NIST_NUGGETS = "nist"
NIST_ASSIGNER = "nist"
NIST_POSTEDIT = "nist-postedit"
NIST_SCRATCH = "nist-scratch"

KIDDIE_TRUTH = "kiddie-truth"  # the kiddie collection's truth leaderboard, as a score table
GOLD_BANK = "gold"  # the kiddie collection's question bank written for the demo (a file's, counted)
CLOUD_BANK = "cloud-bank"  # the bank assessor1 writes from scratch

# The give of work that needs more than the registry's defaults: the app's own giving service, with its options.
Give = Callable[..., AssessorWork]


def _bank_from_scratch(*, topic: Topic, assessor: User, kind: str, by: User | None) -> AssessorWork:
    return nugget_work_give(
        topic=topic, assessor=assessor, condition="manual", by=by, name=CLOUD_BANK, form=NuggetSet.Form.QUESTIONS
    )


# Work that needs no LLM, by campaign slug. Each is (assessor, topic id as the files give it, kind, the give when
# not the registry's).
DEMO_WORK: dict[str, tuple[tuple[str, str, str, Give | None], ...]] = {
    # The imported NIST labels fill the other conditions of these topics (AutoNuggets+Edits with ManualAssign,
    # and the support method the topic was not judged with).
    TREC_DEMO.slug: (
        ("assessor1", "2024-214096", nugget_kinds.NUGGETS_MANUAL, None),
        ("assessor1", "2024-224701", support_kinds.SUPPORT_SCRATCH, None),
        ("assessor2", "2024-213817", nugget_kinds.NUGGETS_MANUAL, None),
        ("assessor2", "2024-79154", support_kinds.SUPPORT_SCRATCH, None),
    ),
    # The report family on the kiddie collection: the bee request's four reports compared pair by pair, the
    # cloud request's question bank written from scratch; the hibernation reports graded 0-5 on the gold bank,
    # and the leaf reports judged yes/no ARGUE-style against it (a topic's human work is one person's).
    KIDDIE_DEMO.slug: (
        ("assessor1", "bee", preference_kinds.PREFERENCE_WORK, None),
        ("assessor1", "cloud", nugget_kinds.BANK_MANUAL, _bank_from_scratch),
        ("assessor2", "hibernation", grade_kinds.GRADE_WORK, partial(grade_work_give, bank=GOLD_BANK)),
        ("assessor2", "leaf", argue_kinds.ARGUE_WORK, partial(argue_work_give, bank=GOLD_BANK)),
    ),
}


def demo_imports(demo_dir: Path = DEMO_DIR) -> list[tuple[str, list[str]]]:
    """The import commands, with their arguments (their campaign's `--campaign` last), in the order they must run."""
    steps: list[tuple[str, list[str]]] = [
        ("import_topics", [str(demo_dir / "topics.tsv")]),
        ("import_segments", [str(demo_dir / "segments.jsonl")]),
        ("import_qrels", [str(demo_dir / "qrels.txt"), "--source", "nist"]),
    ]
    for run_file in sorted((demo_dir / "runs").glob("*.jsonl")):
        steps.append(("import_run", [str(run_file)]))
    steps += [
        (
            "import_assignments",
            [
                str(demo_dir / "nugget_assignment.jl"),
                *("--nuggets", "auto_edit", "--nuggets-name", NIST_NUGGETS),
                *("--assigner", "manual", "--assigner-name", NIST_ASSIGNER),
            ],
        ),
        (
            "import_support",
            [str(demo_dir / "support_with_prediction.jsonl"), "--method", "postedit", "--name", NIST_POSTEDIT],
        ),
        (
            "import_support",
            [str(demo_dir / "support_without_prediction.jsonl"), "--method", "scratch", "--name", NIST_SCRATCH],
        ),
    ]
    return _in_campaign(steps, TREC_DEMO) + kiddie_imports(demo_dir / "kiddie")


def _in_campaign(steps: list[tuple[str, list[str]]], campaign: DemoCampaign) -> list[tuple[str, list[str]]]:
    return [(command, [*arguments, "--campaign", campaign.slug]) for command, arguments in steps]


def kiddie_imports(kiddie: Path) -> list[tuple[str, list[str]]]:
    """The report family's small collection (MIT, from PrefNugget's starter kit): requests, four runs' reports
    with their documents, and its truth leaderboard; and the gold question bank written for the demo. Each into
    the kiddie campaign."""
    steps = [
        ("import_requests", [str(kiddie / "topics" / "kiddie-topics.jsonl")]),
        ("import_reports", [str(path) for path in sorted((kiddie / "runs" / "repgen").glob("*.jsonl"))]),
        (
            "import_scores",
            [
                str(kiddie / "eval" / "kiddie_fake.eval.ir_measures.txt"),
                "--name",
                KIDDIE_TRUTH,
                "--format",
                "ir_measures",
            ],
        ),
        (
            "import_banks",
            [str(kiddie / "banks" / "kiddie-gold.v3.jsonl"), "--name", GOLD_BANK, "--kind", "manual"],
        ),
    ]
    return _in_campaign(steps, KIDDIE_DEMO)


@transaction.atomic
def demo_campaigns_ensure() -> dict[str, Campaign]:
    """The demo's campaigns by slug, made when missing. The TREC one takes over the campaign a fresh database starts
    with while that one is empty and keeps its name (so its topics keep their ids as their keys, and the README's
    commands on them work as they are once the campaign is named)."""
    campaigns: dict[str, Campaign] = {}
    for demo in DEMO_CAMPAIGNS:
        campaign = Campaign.objects.filter(slug=demo.slug).first()
        if campaign is None and demo is TREC_DEMO:
            campaign = _fresh_campaign_taken(demo)
        if campaign is None:
            campaign = campaign_create(
                slug=demo.slug,
                title=demo.title,
                families=list(demo.families),
                answer_word_limit=demo.answer_word_limit,
                answer_reference_cap=demo.answer_reference_cap,
            )
        campaigns[demo.slug] = campaign
    return campaigns


def _fresh_campaign_taken(demo: DemoCampaign) -> Campaign | None:
    """The campaign a fresh database starts with, made `demo`, if it is still empty and keeps its first name."""
    fresh = Campaign.objects.filter(slug=FIRST_SLUG, title=FIRST_TITLE).first()
    if fresh is None or Topic.objects.unscoped().filter(campaign=fresh).exists():
        return None
    fresh.slug, fresh.title, fresh.families = demo.slug, demo.title, list(demo.families)
    fresh.answer_word_limit, fresh.answer_reference_cap = demo.answer_word_limit, demo.answer_reference_cap
    fresh.save(update_fields=["slug", "title", "families", "answer_word_limit", "answer_reference_cap"])
    return fresh


@transaction.atomic
def demo_accounts_ensure() -> dict[str, bool]:
    """Create the demo accounts that are missing, members of both demo campaigns; an existing account keeps its
    password."""
    created: dict[str, bool] = {}
    users = []
    for account in DEMO_ACCOUNTS:
        user = User.objects.filter(username=account.username).first()
        created[account.username] = user is None
        if user is None:
            user = User.objects.create_user(username=account.username, password=account.password)
        user_set_role(user, account.role)
        users.append(user)
    for campaign in Campaign.objects.filter(slug__in=[demo.slug for demo in DEMO_CAMPAIGNS]):
        members_add(campaign, users)
    return created


def demo_work_ensure() -> int:
    """Give each demo assessor topics to work on in both campaigns, so that their queue shows something."""
    added = 0
    for campaign in Campaign.objects.filter(slug__in=list(DEMO_WORK)).order_by("pk"):
        with campaign_scope(campaign):
            added += _campaign_work_ensure(DEMO_WORK[campaign.slug])
    return added


@transaction.atomic
def _campaign_work_ensure(works: tuple[tuple[str, str, str, Give | None], ...]) -> int:
    """The demo work of the campaign in effect that is not given yet."""
    organizer = User.objects.get(username="organizer")
    added = 0
    for username, topic_id, kind, give in works:
        topic = Topic.objects.filter(id=topic_key(topic_id)).first()
        if topic is None or AssessorWork.objects.filter(topic=topic, kind=kind).exists():
            continue
        assessor = User.objects.get(username=username)
        # The app that does the work gives it (ManualNuggets opens the topic's empty nugget set too, and
        # every kind claims the people's source its labels go into).
        page = registry.work_page(kind)
        if page is None:
            raise CommandError(f"no part of the project does {kind} work")
        (give or page.give)(topic=topic, assessor=assessor, kind=kind, by=organizer)
        added += 1
    return added


class Command(BaseCommand):
    help = (
        "Load the demo dataset in two campaigns (four TREC 2024 RAG topics judged by NIST, and the kiddie report "
        "collection with its gold question bank) and the demo accounts."
    )

    def handle(self, *args, **options) -> None:
        campaigns = demo_campaigns_ensure()
        for command, arguments in demo_imports():
            self.stdout.write(f"{command} {' '.join(Path(a).name if '/' in a else a for a in arguments)}")
            call_command(command, *arguments, stdout=self.stdout, stderr=self.stderr)
        created = demo_accounts_ensure()
        added = demo_work_ensure()
        # Each import refreshed what it filled where that is cheap; this covers every table on any database.
        statistics_refresh()
        self.stdout.write(f"assessor work: {added} added")
        self.stdout.write("Campaigns:")
        for campaign in campaigns.values():
            self.stdout.write(f"  {campaign.slug}  {campaign.title}  (/c/{campaign.slug}/)")
        self.stdout.write("Demo accounts (user / password):")
        for account in DEMO_ACCOUNTS:
            note = "" if created[account.username] else "  (existed already; password unchanged)"
            self.stdout.write(f"  {account.username} / {account.password}  [{account.role.value}]{note}")
