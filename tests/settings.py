"""The test suite's settings: the project's, with the example app that proves the registry (tests/verdicts)."""

from assessor.project.settings import *  # noqa: F403
from assessor.project.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "tests.verdicts"]
