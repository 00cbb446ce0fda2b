"""Make a disagreement study, or print the report of one: kappa between judges, sides taken, label counts."""

from django.contrib.auth.models import User
from django.core.management.base import CommandError

from assessor.campaigns.commands import CampaignCommand
from assessor.names import NameRefused, name_checked
from metaeval.models import Study
from metaeval.studies import DEFAULT_K, StudyError, study_create, study_families, study_report


def _source(text: str) -> tuple[str, str]:
    family, _, name = text.partition(":")
    families = study_families()
    if family not in families or not name:
        shapes = " or ".join(f"{name}:NAME" for name in families)
        raise CommandError(f"write a source as {shapes}, not {text!r}")
    return family, name


class Command(CampaignCommand):
    campaign_writes = True
    help = (
        "Sample k items per topic on which two sources disagree (--a, --b) with a seed and give them to an "
        "independent assessor (and, with --llm-name, to an LLM job); or, with --show, print a study's report."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True, help="the study, and the source of the assessor's labels")
        parser.add_argument("--show", action="store_true", help="print the report of the existing study --name")
        parser.add_argument("--a", metavar="SRC", help="source a: FAMILY:NAME (support, assignment, argue...)")
        parser.add_argument("--b", metavar="SRC", help="source b, of the same family")
        parser.add_argument(
            "--nuggets", default="", help="what both labelled against: the nugget list (assignment), the bank (argue)"
        )
        parser.add_argument("--k", type=int, default=DEFAULT_K, help=f"items per topic (default {DEFAULT_K})")
        parser.add_argument("--seed", type=int, help="the seed of the sample")
        parser.add_argument("--assessor", help="the username of the independent assessor")
        parser.add_argument("--llm-name", default="", help="also queue an LLM job judging the items under this name")
        parser.add_argument("--llm-endpoint", help="the LLM endpoint of that job (default: the endpoint 'default')")

    def handle(self, *args, **options) -> None:
        if not options["show"]:
            self._create(options)
        study = Study.objects.filter(name=options["name"]).first()
        if study is None:
            raise CommandError(f"no study named {options['name']!r}")
        self._report(study)

    def _create(self, options: dict) -> None:
        missing = [f"--{key}" for key in ("a", "b", "seed", "assessor") if options[key] is None]
        if missing:
            raise CommandError(f"a new study needs {', '.join(missing)}")
        try:
            name_checked(options["name"], option="--name")
            if options["llm_name"]:
                name_checked(options["llm_name"], option="--llm-name")
        except NameRefused as refusal:
            raise CommandError(str(refusal)) from None
        (family, source_a), (family_b, source_b) = _source(options["a"]), _source(options["b"])
        if family != family_b:
            raise CommandError("--a and --b must be of one family")
        assessor = User.objects.filter(username=options["assessor"]).first()
        if assessor is None:
            raise CommandError(f"no user named {options['assessor']!r}")
        try:
            study = study_create(
                name=options["name"], family=family, source_a=source_a, source_b=source_b, assessor=assessor,
                by=None, seed=options["seed"], k=options["k"], nugget_set=options["nuggets"],
                llm_name=options["llm_name"], llm_endpoint=options["llm_endpoint"],
            )  # fmt: skip
        except StudyError as exc:
            raise CommandError(str(exc)) from None
        llm = f"; LLM job {study.llm_job_id} queued" if study.llm_job_id else ""
        self.stdout.write(f"study {study.name}: {study.items_total} items on {len(study.sample)} topics{llm}")

    def _report(self, study: Study) -> None:
        report = study_report(study)
        out = self.stdout
        out.write(f"{study}, k = {study.k}, seed {study.seed}: {report.items} items")
        if report.open_topics:
            out.write(f"not submitted (not counted): {', '.join(report.open_topics)}")
        out.write("Cohen's kappa")
        for pair in report.pairs:
            kappa = pair.confusion.kappa
            shown = "-" if kappa != kappa else f"{kappa:.3f}"
            out.write(f"  {pair.first.name:<24} {pair.second.name:<24} {pair.confusion.total:>6} {shown:>8}")
        out.write(f"sided with a / b / neither ({study.source_a.name} / {study.source_b.name})")
        for sided in report.sided:
            out.write(f"  {sided.judge.name:<24} {sided.with_a:>6} {sided.with_b:>6} {sided.neither:>6}")
        out.write(f"{'labels':<26}" + "".join(f"{label:>16}" for label in report.labels))
        for judge in report.judges:
            out.write(f"  {judge.name:<24}" + "".join(f"{n:>16}" for n in judge.distribution(report.labels)))
