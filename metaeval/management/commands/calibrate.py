"""Calibrated run scores (prediction-powered inference), and the check of the method on known truth."""

from django.core.management.base import CommandError

from assessor.campaigns.commands import CampaignCommand
from assessor.management.base import add_include_open_argument, notes_write
from assessor.scoring.lifecycle import open_work_included
from metaeval.calibration import calibration_build, calibration_summary, simulation_on_condition, simulation_summary
from metaeval.sources import CONDITION_PATTERN, sources_notes


class Command(CampaignCommand):
    help = (
        "Estimate each run's human-equivalent score with a 95%% interval from an LLM condition on every topic and a "
        "human condition on a sample of its answers (--llm, --human); or, with --simulate, check the method on a human "
        "condition (the truth) against an LLM-like copy of its labels, for several sample sizes and seeds."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--human", required=True, metavar="SRC", help="the human source (NUGGETS/ASSIGNER, support:METHOD)"
        )
        parser.add_argument("--llm", default="", metavar="SRC", help="the LLM source, on every topic")
        parser.add_argument("--metric", default="Vstrict", help="the metric (default Vstrict)")
        parser.add_argument(
            "--fraction",
            type=float,
            default=None,
            help="use a seeded sample of this share of each run's human-scored answers",
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--simulate", action="store_true", help="check the method on --human (a nugget condition)")
        parser.add_argument("--fractions", type=float, nargs="+", default=[0.05, 0.10, 0.25])
        parser.add_argument("--seeds", type=int, default=20, help="with --simulate: samples drawn per size")
        add_include_open_argument(parser)

    def handle(self, *args, **options) -> None:
        with open_work_included(options["include_open"]):
            try:
                if options["simulate"]:
                    self._simulate(options)
                else:
                    self._calibrate(options)
            except (LookupError, ValueError) as exc:
                raise CommandError(str(exc.args[0] if exc.args else exc)) from None

    def _calibrate(self, options: dict) -> None:
        if not options["llm"]:
            raise CommandError("give --llm SRC (or --simulate)")
        result = calibration_build(
            llm=options["llm"], human=options["human"], metric=options["metric"],
            fraction=options["fraction"], seed=options["seed"],
        )  # fmt: skip
        notes_write(self, sources_notes([options["llm"], options["human"]]))
        self.stdout.write(calibration_summary(result))
        self.stdout.write(
            f"{'rank':>4}  {'run':<40} {'estimate':>9} {'low':>9} {'high':>9} {'LLM mean':>9} {'answers':>8} {'human':>9}"
        )
        for rank, estimate in enumerate(result.estimates, start=1):
            human = result.human_means.get(estimate.run_id)
            self.stdout.write(
                f"{rank:>4}  {estimate.run_id:<40} {estimate.estimate:9.4f} {estimate.low:9.4f} {estimate.high:9.4f}"
                f" {estimate.llm_mean:9.4f} {f'{estimate.sampled}/{estimate.answered}':>8}"
                f" {'' if human is None else f'{human:.4f}':>9}"
            )

    def _simulate(self, options: dict) -> None:
        match = CONDITION_PATTERN.match(options["human"])
        if match is None:
            raise CommandError("--simulate takes a nugget condition, NUGGETS/ASSIGNER")
        simulation = simulation_on_condition(
            nuggets=match["nuggets"], assigner=match["assigner"], metric=options["metric"],
            fractions=options["fractions"], seeds=range(options["seeds"]),
        )  # fmt: skip
        notes_write(self, sources_notes([options["human"]]))
        self.stdout.write(
            f"{options['human']} {options['metric']}: {simulation_summary(simulation)}\n"
            f"{'sample':>7} {'answers':>8} {'tau mean':>9} {'tau min':>8} {'coverage':>9} {'half width':>11} "
            f"{'error':>7} {'tau sample only':>16}"
        )
        for row in simulation.rows:
            self.stdout.write(
                f"{row.fraction:7.0%} {row.sample_answers:>8} {row.tau_mean:9.3f} {row.tau_min:8.3f} "
                f"{row.coverage:9.1%} {row.half_width:11.4f} {row.error:7.4f} {row.tau_sample_only:16.3f}"
            )
