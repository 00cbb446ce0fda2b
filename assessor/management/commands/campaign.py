"""Campaigns from the command line: add, list, show, close (and reopen), and their people."""

from pathlib import Path

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from assessor.campaigns.commands import campaign_named
from assessor.campaigns.services import (
    CampaignRefused,
    campaign_close,
    campaign_counts,
    campaign_create,
    campaign_reopen,
    members_add,
    members_remove,
    protocol_families,
)
from assessor.models import Campaign


class Command(BaseCommand):
    help = "Add, list, show, close or reopen campaigns, and add people to one."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        add = actions.add_parser("add", help="a new campaign")
        add.add_argument("slug", help="its name in URLs, commands and file names: trec-2025-rag")
        add.add_argument("--title", required=True, help='what people read: "TREC 2025 RAG"')
        add.add_argument("--family", action="append", default=None,
                         help="a protocol family it uses (repeat for both; default: both)")  # fmt: skip
        add.add_argument("--description", default="")
        add.add_argument("--word-limit", type=int, default=None, help="an answer's word limit (TREC 2024 RAG: 400)")
        add.add_argument("--reference-cap", type=int, default=None, help="an answer's references (TREC 2024 RAG: 20)")
        add.add_argument("--guidelines", type=Path, default=None, help="a text file of the assessors' guidelines")
        add.add_argument("--endpoint", default="", help="the LLM endpoint its jobs use when none is named")
        actions.add_parser("list", help="every campaign, a line each")
        show = actions.add_parser("show", help="a campaign's rules and counts")
        show.add_argument("slug")
        close = actions.add_parser("close", help="make a campaign read-only (downloads still work)")
        close.add_argument("slug")
        reopen = actions.add_parser("reopen", help="take a closed campaign's labels, jobs and files again")
        reopen.add_argument("slug")
        members = actions.add_parser("members", help="add people (their accounts) to a campaign, or take them out")
        members.add_argument("slug")
        members.add_argument("usernames", nargs="+")
        members.add_argument(
            "--remove", action="store_true", help="take them out: the campaign and their work in it leave their pages"
        )

    def handle(self, *args, **options) -> None:
        getattr(self, "handle_" + options["action"])(options)

    def handle_add(self, options: dict) -> None:
        guidelines = ""
        if options["guidelines"] is not None:
            try:
                guidelines = options["guidelines"].read_text(encoding="utf-8")
            except OSError as exc:
                raise CommandError(f"--guidelines {options['guidelines']}: {exc.strerror}") from None
        for option in ("word_limit", "reference_cap"):
            if options[option] is not None and options[option] < 1:
                raise CommandError(f"--{option.replace('_', '-')}: at least 1")
        try:
            campaign = campaign_create(
                slug=options["slug"],
                title=options["title"],
                families=options["family"],
                description=options["description"],
                answer_word_limit=options["word_limit"],
                answer_reference_cap=options["reference_cap"],
                guidelines=guidelines,
                default_endpoint=options["endpoint"],
            )
        except CampaignRefused as refusal:
            raise CommandError(f"{refusal}. Nothing was created.") from None
        self.stdout.write(f"Created campaign {campaign.slug} ({campaign.title}).")

    def handle_list(self, options: dict) -> None:
        for campaign in Campaign.objects.order_by("created_at", "pk"):
            counts = campaign_counts(campaign)
            state = "closed" if campaign.is_closed else "open"
            self.stdout.write(
                f"{campaign.slug}\t{campaign.title}\t{state}\t{counts.topics} topics\t{counts.runs} runs\t"
                f"{counts.organizers + counts.assessors} people"
            )

    def handle_show(self, options: dict) -> None:
        campaign = campaign_named(options["slug"])
        counts = campaign_counts(campaign)

        def limit(value: int | None) -> str:
            return str(value) if value is not None else "none"

        lines = [
            f"campaign:     {campaign.slug}",
            f"title:        {campaign.title}",
            f"state:        {'closed ' + campaign.closed_at.isoformat() if campaign.closed_at else 'open'}",
            f"families:     {', '.join(campaign.families) if campaign.families else 'all (' + ', '.join(protocol_families()) + ')'}",
            f"word limit:   {limit(campaign.answer_word_limit)}",
            f"references:   {limit(campaign.answer_reference_cap)}",
            f"endpoint:     {campaign.default_endpoint or 'default'}",
            f"guidelines:   {len(campaign.guidelines.split()):,} words"
            if campaign.guidelines
            else "guidelines:   none",
            f"topics:       {counts.topics:,}",
            f"runs:         {counts.runs:,}",
            f"sources:      {counts.sources:,} (qrels: {counts.qrel_sources:,})",
            f"jobs:         {counts.jobs:,}",
            f"imports:      {counts.imports:,}",
            f"work:         {counts.work:,} ({counts.work_submitted:,} submitted)",
            f"organizers:   {counts.organizers:,}",
            f"assessors:    {counts.assessors:,}",
        ]
        if campaign.description:
            lines.insert(2, f"description:  {campaign.description}")
        self.stdout.write("\n".join(lines))

    def handle_close(self, options: dict) -> None:
        campaign = campaign_named(options["slug"])
        closed = campaign_close(campaign)
        self.stdout.write(f"Closed {campaign.slug}." if closed else f"{campaign.slug} was closed already.")

    def handle_reopen(self, options: dict) -> None:
        campaign = campaign_named(options["slug"])
        reopened = campaign_reopen(campaign)
        self.stdout.write(f"Reopened {campaign.slug}." if reopened else f"{campaign.slug} is open.")

    def handle_members(self, options: dict) -> None:
        campaign = campaign_named(options["slug"])
        users = list(User.objects.filter(username__in=options["usernames"]))
        missing = sorted(set(options["usernames"]) - {user.username for user in users})
        if missing:
            raise CommandError(
                f"No account {', '.join(missing)}. Nobody was {'removed' if options['remove'] else 'added'}."
            )
        if options["remove"]:
            removed = members_remove(campaign, users)
            self.stdout.write(f"Removed {removed} of {len(users)} from {campaign.slug} (the others were not members).")
            return
        added = members_add(campaign, users)
        self.stdout.write(f"Added {added} of {len(users)} to {campaign.slug} (the others were members already).")
