import json

from django.core.management.base import CommandError

from assessor.campaigns.commands import CampaignCommand
from assessor.management.base import add_include_open_argument
from assessor.scoring.lifecycle import open_work_included, qrels_notes
from metaeval.qrels_agreement import FIGURES, QrelsSourceError, qrels_agreement_build, qrels_agreement_json


def _number(value: float) -> str:
    return "n/a" if value != value else f"{value:.4f}"


class Command(CampaignCommand):
    help = (
        "Agreement of two qrels sources per topic and on average, over the segments both graded: precision, "
        "recall and F1 of b's relevant set against a's, Jaccard, Cohen's kappa and Krippendorff's alpha (ordinal)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--a", required=True, metavar="SOURCE", help="the first qrels source (the reference), e.g. nist"
        )
        parser.add_argument("--b", required=True, metavar="SOURCE", help="the second qrels source, e.g. umbrela")
        parser.add_argument("--threshold", type=int, default=1, help="the least grade that is relevant (default 1)")
        parser.add_argument("--json", action="store_true", help="print JSON for scripts")
        add_include_open_argument(parser)

    def handle(self, *args, **options) -> None:
        with open_work_included(options["include_open"]):
            self._handle(options)

    def _handle(self, options: dict) -> None:
        try:
            result = qrels_agreement_build(options["a"], options["b"], threshold=options["threshold"])
        except QrelsSourceError as exc:
            raise CommandError(str(exc.args[0])) from None
        # What keeps either source from being final (an LLM job running, or partial), as the page says it.
        notes = qrels_notes([options["a"], options["b"]])
        for note in notes:
            self.stderr.write(f"warning: {note}")
        if options["json"]:
            self.stdout.write(json.dumps({**qrels_agreement_json(result), "notes": notes}, indent=2))
            return
        out = self.stdout
        out.write(f"a = {result.a}    b = {result.b}    relevant: grade >= {result.threshold}")
        out.write(f"{'topic':<16}{'shared':>8}" + "".join(f"{name:>15}" for name in FIGURES))
        for row in [*result.topics, result.pooled]:
            out.write(
                f"{row.topic:<16}{row.shared:>8}" + "".join(f"{_number(row.figure(name)):>15}" for name in FIGURES)
            )
        out.write(f"{'mean':<16}{'':>8}" + "".join(f"{_number(result.mean[name]):>15}" for name in FIGURES))
        out.write(f"graded only by a: {result.only_in_a}; only by b: {result.only_in_b}")
