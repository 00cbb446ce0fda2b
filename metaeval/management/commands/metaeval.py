import json

from django.core.management.base import CommandError

from assessor.campaigns.commands import CampaignCommand
from assessor.management.base import add_include_open_argument, notes_write
from assessor.models.keys import published_id
from assessor.scoring.lifecycle import open_work_included
from metaeval.comparison import (
    TOPIC_FIGURES,
    Comparison,
    TopicsError,
    comparison_build,
    comparison_json,
    topics_resolve,
)
from metaeval.sources import SourceError, sources_notes
from metaeval.stats import RUN_COEFFICIENTS, TauOptions
from metaeval.truth import ON_MISSING, figure_names
from metaeval.truth_comparison import TruthComparison, TruthOptions, truth_build, truth_json


def _tau(value: float) -> str:
    return "n/a" if value != value else f"{value:.4f}"


class Command(CampaignCommand):
    help = (
        "Compare two score sources: Kendall's tau three ways per metric, Spearman, Pearson, tau_ap_b, tau_GAP and "
        "tau over the top k runs, with 95%% bootstrap intervals over topics and, where they share labels, the "
        "confusion matrix, Cohen's and weighted kappa and Krippendorff's alpha. "
        "A source is NUGGETS/ASSIGNER, support:METHOD or scores:NAME. With --truth instead of --b, source a against a "
        "truth leaderboard as autojudge-evaluate's meta-evaluate computes it."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--a", required=True, metavar="SRC", help="the first source (matrix rows)")
        parser.add_argument("--b", default="", metavar="SRC", help="the second source (matrix columns)")
        parser.add_argument(
            "--truth", default="", metavar="SRC",
            help="instead of --b: a truth leaderboard (scores:NAME) to correlate source a with, as autojudge-evaluate "
            "does it (runs aligned by id, --on-missing, kendall@k over the truth's top k, per-topic figures)",
        )  # fmt: skip
        parser.add_argument(
            "--on-missing", choices=ON_MISSING, default="error",
            help="with --truth: a truth run the judged source lacks counts 0 (zero), is left out (skip), or is an "
            "error naming the runs (error, the default, as in autojudge-evaluate)",
        )  # fmt: skip
        parser.add_argument(
            "--per-topic", action="store_true", help="with --truth: print each topic's figures, not only their means"
        )
        parser.add_argument(
            "--metric", nargs="+", action="extend", default=[], metavar="NAME",
            help="metrics to compare (default: every metric both sources have); A=B compares a's A with b's B",
        )  # fmt: skip
        parser.add_argument("--top-k", type=int, default=10, help="tau over the top K runs of source a (default 10)")
        parser.add_argument(
            "--top-k-of", choices=("a", "b"), default="a",
            help="whose top K runs tau_top_k is over: a (the default) or b (a truth given as b)",
        )  # fmt: skip
        parser.add_argument(
            "--bootstrap", type=int, default=1000, metavar="N",
            help="resamples of the topics for the 95%% intervals (default 1000; 0: none)",
        )  # fmt: skip
        parser.add_argument("--seed", type=int, default=0, help="the bootstrap's seed (default 0)")
        parser.add_argument(
            "--missing", choices=("zero", "skip"), default="zero",
            help="a topic a run did not answer counts 0 (zero, the track's rule) or is left out of its mean (skip)",
        )  # fmt: skip
        topics = parser.add_mutually_exclusive_group()
        topics.add_argument("--topics", nargs="+", default=[], metavar="ID", help="only these topics")
        topics.add_argument("--topics-of", default="", metavar="SRC", help="only the topics source SRC scored")
        parser.add_argument(
            "--partial-support-yes",
            action="store_true",
            help="a support method against yes/no judgments: PS counts as yes (by default FS alone is yes)",
        )
        parser.add_argument("--json", action="store_true", help="print JSON for scripts")
        add_include_open_argument(parser)

    def handle(self, *args, **options) -> None:
        with open_work_included(options["include_open"]):
            self._handle(options)

    def _handle(self, options: dict) -> None:
        if options["truth"]:
            self._handle_truth(options)
            return
        if not options["b"]:
            raise CommandError("give the second source (--b SRC), or a truth leaderboard (--truth SRC)")
        if options["bootstrap"] < 0:
            raise CommandError("--bootstrap must be 0 or more")
        try:
            tau_options = TauOptions(
                top_k=options["top_k"],
                top_k_of=options["top_k_of"],
                bootstrap=options["bootstrap"],
                seed=options["seed"],
                missing=options["missing"],
                topics=topics_resolve(topics=options["topics"], topics_of=options["topics_of"]),
            )
            comparison = comparison_build(
                options["a"],
                options["b"],
                metrics=options["metric"],
                options=tau_options,
                partial_yes=options["partial_support_yes"],
            )
        except (SourceError, TopicsError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        notes_write(self, sources_notes([options["a"], options["b"]]))
        if options["json"]:
            self.stdout.write(json.dumps(comparison_json(comparison), indent=2))
        else:
            self._write_table(comparison)

    def _handle_truth(self, options: dict) -> None:
        if options["b"]:
            raise CommandError("--b and --truth exclude each other: compare two sources, or a source with a truth")
        if options["topics"] or options["topics_of"]:
            raise CommandError(
                "--truth correlates the leaderboards' `all` rows as they are: no --topics or --topics-of"
            )
        try:
            comparison = truth_build(
                options["a"],
                options["truth"],
                metrics=options["metric"],
                options=TruthOptions(on_missing=options["on_missing"], top_k=options["top_k"]),
            )
        except (SourceError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        notes_write(self, sources_notes([options["a"], options["truth"]]))
        if options["json"]:
            self.stdout.write(json.dumps(truth_json(comparison), indent=2))
        else:
            self._write_truth_table(comparison, per_topic=options["per_topic"])

    def _write_truth_table(self, comparison: TruthComparison, *, per_topic: bool) -> None:
        out = self.stdout
        options = comparison.options
        names = figure_names(options.top_k)
        out.write(f"a = {comparison.a}    truth = {comparison.truth}")
        out.write(f"missing runs: {options.on_missing}; kendall@{options.top_k} over the truth's top {options.top_k}")
        figures_head = "".join(f"{name:>12}" for name in names)
        out.write("")
        out.write(f"{'metric=truth metric':<28}{'runs':>8}{figures_head}")
        for pair in comparison.pairs:
            figures = "".join(f"{_tau(pair.figures[name]):>12}" for name in names)
            out.write(f"{pair.metric + '=' + pair.truth_metric:<28}{pair.runs:>8}{figures}")
            if pair.missing_in_judged:
                verb = "count 0" if options.on_missing == "zero" else "left out"
                out.write(f"  truth runs the judged source lacks ({verb}): {', '.join(pair.missing_in_judged)}")
            if pair.missing_in_truth:
                out.write(f"  judged runs the truth lacks (left out): {', '.join(pair.missing_in_truth)}")
        out.write("")
        out.write("per topic: the mean over the topics where a figure is defined (topics counted)")
        out.write(f"{'metric=truth metric':<28}{'topics':>8}{figures_head}")
        for pair in comparison.pairs:
            topics = pair.topics
            cells = "".join(f"{_tau(topics.mean[name]) + f' ({topics.counted[name]})':>12}" for name in names)
            out.write(f"{pair.metric + '=' + pair.truth_metric:<28}{len(topics.topics):>8}{cells}")
            if per_topic:
                for topic, on_topic in topics.topics.items():
                    cells = "".join(f"{_tau(on_topic[name]) if on_topic else 'n/a':>12}" for name in names)
                    out.write(f"  {published_id(topic):<26}{'':>8}{cells}")

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
        self._write_run_level(comparison)
        confusion = comparison.confusion
        out.write("")
        if confusion is None:
            out.write(
                "no labels shared: confusion matrices need two conditions on one nugget set, or two support methods"
            )
            return
        out.write(f"confusion matrix, rows {comparison.a}, columns {comparison.b}, {confusion.total} shared pairs")
        width = max(len(label) for label in confusion.labels) + 2
        cell = max(width, 16)
        out.write(" " * width + "".join(f"{label:>{cell}}" for label in confusion.labels) + f"{'total':>10}")
        for label, row, pct in zip(confusion.labels, confusion.counts, confusion.percentages, strict=True):
            cells = "".join(f"{f'{count} ({share:.1f}%)':>{cell}}" for count, share in zip(row, pct, strict=True))
            out.write(f"{label:<{width}}{cells}{sum(row):>10}")
        out.write(
            f"{'total':<{width}}"
            + "".join(f"{n:>{cell}}" for n in confusion.column_totals())
            + f"{confusion.total:>10}"
        )
        out.write(f"agreement {_tau(confusion.agreement)}    Cohen's kappa {_tau(confusion.kappa)}")
        out.write(
            f"weighted kappa linear {_tau(confusion.kappa_linear)}    quadratic {_tau(confusion.kappa_quadratic)}"
            f"    Krippendorff's alpha (ordinal) {_tau(confusion.alpha_ordinal)}"
            f"    (nominal) {_tau(confusion.alpha_nominal)}"
        )
        if confusion.missing_a or confusion.missing_b:
            out.write(f"labelled only in a: {confusion.missing_b}; only in b: {confusion.missing_a}")

    def _write_run_level(self, comparison: Comparison) -> None:
        if not comparison.taus:
            return
        out = self.stdout
        options = comparison.options
        out.write("")
        subset = f", {len(options.topics)} topics chosen" if options.topics is not None else ""
        intervals = (
            f", 95% intervals from {options.bootstrap} resamples of the topics (seed {options.seed})"
            if options.bootstrap
            else ""
        )
        out.write(
            f"run level (missing topics: {options.missing}, top k = {options.top_k} of {options.top_k_of}{subset}{intervals})"
        )
        names = list(RUN_COEFFICIENTS)
        out.write(f"{'metric':<20}" + "".join(f"{name:>24}" for name in names))
        for tau in comparison.taus:
            cells = []
            for name in names:
                cell = _tau(getattr(tau, name))
                if name in tau.ci95:
                    low, high = tau.ci95[name]
                    cell += f" [{_tau(low)},{_tau(high)}]"
                cells.append(f"{cell:>24}")
            out.write(f"{tau.metric:<20}" + "".join(cells))
        out.write("")
        out.write(f"{'metric':<20}" + "".join(f"{name:>20}" for name in TOPIC_FIGURES))
        for tau in comparison.taus:
            out.write(f"{tau.metric:<20}" + "".join(f"{_tau(getattr(tau, name)):>20}" for name in TOPIC_FIGURES))
