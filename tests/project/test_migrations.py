"""Every model change comes with its migration."""

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_no_migration_is_pending(capsys):
    try:
        call_command("makemigrations", "--check", "--dry-run", verbosity=1)
    except SystemExit:
        pytest.fail(f"makemigrations --check found model changes without a migration:\n{capsys.readouterr().out}")
