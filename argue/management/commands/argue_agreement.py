from django.core.management.base import CommandError

from argue.agreement import SUPPORT_MAPPINGS, argue_confusions, support_method_confusion
from assessor.campaigns.commands import CampaignCommand
from metaeval.stats import Confusion


def _lines(title: str, confusion: Confusion, names: tuple[str, str]) -> list[str]:
    lines = [
        f"{title}: {confusion.total} judged by both, {confusion.missing_b} by {names[0]} only, "
        f"{confusion.missing_a} by {names[1]} only (rows {names[0]}, columns {names[1]})",
        "       " + "".join(f"{label:>8}" for label in confusion.labels),
    ]
    for label, row in zip(confusion.labels, confusion.counts, strict=True):
        lines.append(f"  {label:<5}" + "".join(f"{count:>8}" for count in row))
    lines.append(
        f"  agreement {confusion.agreement:.4f}, Cohen's kappa {confusion.kappa:.4f}, "
        f"Krippendorff's alpha {confusion.alpha_nominal:.4f}"
    )
    return lines


class Command(CampaignCommand):
    help = (
        "Agreement of two ARGUE-style sources on each judgment (citation support, gold answers), or of a support "
        "method of the TREC 2024 family with an ARGUE-style source on the citations both judged."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--a", required=True, metavar="NAME", help="an ARGUE-style source (the rows)")
        parser.add_argument("--b", default="", metavar="NAME", help="another ARGUE-style source (the columns)")
        parser.add_argument(
            "--support", default="", metavar="METHOD", help="a support method (FS/PS/NS) to compare --a with"
        )
        parser.add_argument(
            "--mapping",
            choices=sorted(SUPPORT_MAPPINGS),
            default="fs",
            help="with --support: fs (FS is yes; PS, NS no; the default) or fs_ps (FS and PS yes)",
        )

    def handle(self, *args, **options) -> None:
        a, b, method = options["a"], options["b"], options["support"]
        if bool(b) == bool(method):
            raise CommandError("give either --b (another ARGUE-style source) or --support (a support method)")
        if method:
            confusion = support_method_confusion(method=method, name=a, mapping=options["mapping"])
            title = f"support ({method} as yes/no by {options['mapping']})"
            lines = _lines(title, confusion, (method, a))
        else:
            confusions = argue_confusions(a, b)
            lines = _lines("citation support", confusions["support"], (a, b))
            lines += _lines("gold answers", confusions["answers"], (a, b))
        self.stdout.write("\n".join(lines))
