"""Create an assessor (or, with --organizer, an organizer) account from the command line."""

import getpass
import sys

from django.core.management.base import CommandError

from assessor.accounts.services import AccountRefused, account_create, password_generate
from assessor.campaigns.commands import CampaignCommand
from assessor.work.roles import Role


class Command(CampaignCommand):
    help = (
        "Create an account: the password from --password, typed at a prompt (--prompt), "
        "or made and printed once (the default)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument("--password", default=None, help="the password (visible in the shell's history)")
        parser.add_argument("--prompt", action="store_true", help="ask for the password, not echoed")
        parser.add_argument("--organizer", action="store_true", help="an organizer instead of an assessor")

    def handle(self, *args, **options) -> None:
        password = options["password"]
        if password is None and options["prompt"]:
            if not sys.stdin.isatty():
                raise CommandError("--prompt needs a terminal; give --password, or neither to have one made.")
            password = getpass.getpass("Password: ")
            if password != getpass.getpass("Again: "):
                raise CommandError("The two passwords differ; nothing was created.")
        generated = password is None
        if generated:
            password = password_generate()
        role = Role.ORGANIZER if options["organizer"] else Role.ASSESSOR
        try:
            user = account_create(actor=None, username=options["username"], password=password, role=role)
        except AccountRefused as refusal:
            raise CommandError(f"{refusal} Nothing was created.") from None
        self.stdout.write(f"Created {role.value} {user.get_username()}.")
        if generated:
            self.stdout.write(f"Password: {password}")
