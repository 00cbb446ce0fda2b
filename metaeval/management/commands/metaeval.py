import json

from django.core.management.base import BaseCommand, CommandError

from metaeval.comparison import Comparison, comparison_build, comparison_json
from metaeval.sources import SourceError


def _tau(value: float) -> str:
    return "n/a" if value != value else f"{value:.4f}"


class Command(BaseCommand):
    help = (
        "Compare two score sources: Kendall's tau three ways per metric and, where they share labels, "
        "the confusion matrix and Cohen's kappa. A source is NUGGETS/ASSIGNER, support:METHOD or scores:NAME."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--a", required=True, metavar="SRC", help="the first source (matrix rows)")
        parser.add_argument("--b", required=True, metavar="SRC", help="the second source (matrix columns)")
        parser.add_argument(
            "--metric", nargs="+", action="extend", default=[], metavar="NAME",
            help="metrics to compare (default: every metric both sources have)",
        )  # fmt: skip
        parser.add_argument("--json", action="store_true", help="print JSON for scripts")

    def handle(self, *args, **options) -> None:
        try:
            comparison = comparison_build(options["a"], options["b"], metrics=options["metric"])
        except (SourceError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        if options["json"]:
            self.stdout.write(json.dumps(comparison_json(comparison), indent=2))
        else:
            self._write_table(comparison)

    def _write_table(self, comparison: Comparison) -> None:
        out = self.stdout
        out.write(f"a = {comparison.a}    b = {comparison.b}")
        out.write("")
        out.write(f"{'metric':<20}{'tau_run':>9}{'tau_topic':>11}{'tau_all':>9}{'runs':>7}{'topics':>13}{'pairs':>9}")
        for tau in comparison.taus:
            topics = f"{tau.topics_with_tau}/{tau.topics}"
            out.write(
                f"{tau.metric:<20}{_tau(tau.tau_run):>9}{_tau(tau.tau_topic_avg):>11}{_tau(tau.tau_all):>9}"
                f"{tau.runs:>7}{topics:>13}{tau.pairs:>9}"
            )
        if not comparison.taus:
            out.write("(no metric in common)")
        out.write("topics: those with a defined per-topic tau / those both sources scored")
        confusion = comparison.confusion
        out.write("")
        if confusion is None:
            out.write("no labels shared: confusion matrices need two conditions on one nugget set, or two support methods")
            return
        out.write(f"confusion matrix, rows {comparison.a}, columns {comparison.b}, {confusion.total} shared pairs")
        width = max(len(label) for label in confusion.labels) + 2
        cell = max(width, 16)
        out.write(" " * width + "".join(f"{label:>{cell}}" for label in confusion.labels) + f"{'total':>10}")
        for label, row, pct in zip(confusion.labels, confusion.counts, confusion.percentages, strict=True):
            cells = "".join(f"{f'{count} ({share:.1f}%)':>{cell}}" for count, share in zip(row, pct, strict=True))
            out.write(f"{label:<{width}}{cells}{sum(row):>10}")
        out.write(f"{'total':<{width}}" + "".join(f"{n:>{cell}}" for n in confusion.column_totals()) + f"{confusion.total:>10}")
        out.write(f"agreement {_tau(confusion.agreement)}    Cohen's kappa {_tau(confusion.kappa)}")
        if confusion.missing_a or confusion.missing_b:
            out.write(f"labelled only in a: {confusion.missing_b}; only in b: {confusion.missing_a}")
