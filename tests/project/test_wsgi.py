"""The WSGI module gunicorn loads (--preload) before it forks its processes."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_served_app_freezes_what_it_loaded(tmp_path):
    """Loaded, then frozen: the collector's full passes skip Django, the apps and their libraries, and the
    forked processes share those objects' memory pages (assessor/project/wsgi.py)."""
    code = (
        "import gc; before = gc.get_freeze_count(); import assessor.project.wsgi as wsgi; "
        "print(before, gc.get_freeze_count(), callable(wsgi.application))"
    )
    env = {**os.environ, "ASSESSOR_VAR_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "assessor.project.settings"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=True
    )
    before, frozen, app = done.stdout.split()
    assert (int(before), app) == (0, "True")
    # Django alone is tens of thousands of objects; the apps' libraries (Celery, SciPy, openai) many more.
    assert int(frozen) > 50_000
