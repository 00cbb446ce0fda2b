"""What the ARGUE-style app adds to the registry."""

from argue.kinds import ARGUE_FAMILY
from assessor.registry import LabelFamily, register_label_family


def register() -> None:
    register_label_family(LabelFamily(ARGUE_FAMILY, "ARGUE-style source"))
