"""The kiddie collection's truth leaderboard and a judged leaderboard made by hand, imported as score tables."""

from io import StringIO
from pathlib import Path

from django.core.management import call_command

from tests.reports.kiddie import KIDDIE

KIDDIE_TRUTH = KIDDIE / "eval" / "kiddie_fake.eval.ir_measures.txt"
# The truth's means: run1 0.864, run2 0.692, run3 0.316, run4 0.088. The judged leaderboard lacks run4 and has
# a run5 the truth lacks; every judge gives the bee topic's reports one score, and run5 has no hibernation row.
JUDGED = """\
run1\tleaf\tJUDGE\t0.5
run1\tcloud\tJUDGE\t0.7
run1\tbee\tJUDGE\t0.8
run1\tearthworms\tJUDGE\t0.4
run1\thibernation\tJUDGE\t0.6
run1\tall\tJUDGE\t0.6
run2\tleaf\tJUDGE\t0.9
run2\tcloud\tJUDGE\t0.6
run2\tbee\tJUDGE\t0.8
run2\tearthworms\tJUDGE\t0.9
run2\thibernation\tJUDGE\t0.8
run2\tall\tJUDGE\t0.8
run3\tleaf\tJUDGE\t0.5
run3\tcloud\tJUDGE\t0.2
run3\tbee\tJUDGE\t0.8
run3\tearthworms\tJUDGE\t0.3
run3\thibernation\tJUDGE\t0.2
run3\tall\tJUDGE\t0.4
run5\tleaf\tJUDGE\t0.1
run5\tcloud\tJUDGE\t0.3
run5\tbee\tJUDGE\t0.8
run5\tearthworms\tJUDGE\t0.9
run5\tall\tJUDGE\t0.9
"""


def kiddie_leaderboards_import(folder: Path) -> Path:
    """Import the truth as `scores:kiddie-truth` and the judged leaderboard as `scores:judged`; the latter's path."""
    judged = folder / "judged.txt"
    judged.write_text(JUDGED)
    call_command(
        "import_scores", str(KIDDIE_TRUTH), "--name", "kiddie-truth", "--format", "ir_measures", stdout=StringIO()
    )
    call_command("import_scores", str(judged), "--name", "judged", "--format", "ir_measures", stdout=StringIO())
    return judged
