"""The test suite's settings: the project's, with the example app that proves the registry (tests/verdicts)."""

from django.conf import global_settings

from assessor.project.settings import *  # noqa: F403
from assessor.project.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "tests.verdicts"]

# Passwords of test users are hashed with a fast hasher: the production one (PBKDF2, a million iterations) costs a
# quarter of a second a user, and the suite makes thousands. The production hashers stay listed after it, so that a
# hash made by the project's own settings still checks. A test whose passwords a process with the project's settings
# must check (tests/project/test_deployment.py) hashes them with those.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher", *global_settings.PASSWORD_HASHERS]
