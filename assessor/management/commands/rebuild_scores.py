import time

from assessor.campaigns.commands import CampaignCommand
from assessor.scoring.kept import scores_rebuild


class Command(CampaignCommand):
    help = (
        "Compute every kept score again from the labels (the writes keep them up to date; this is for a "
        "database restored or changed by hand). One transaction: the pages read the old scores until it ends."
    )

    def handle(self, *args, **options) -> None:
        started = time.perf_counter()
        kept = scores_rebuild()
        for family, sources in kept.items():
            self.stdout.write(f"{family}: {sources} source(s) kept")
        self.stdout.write(f"rebuilt in {time.perf_counter() - started:.1f} s")
