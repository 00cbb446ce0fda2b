"""A worker sets what it loaded as it started aside from the garbage collector (assessor.jobs.tasks)."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# In a process of its own: freezing is for the process's life, and this one runs the other tests.
STARTED = """
import gc
import django
django.setup()
from assessor.jobs import tasks
loaded = len(gc.get_objects())
tasks.worker_prepared()
print(loaded, gc.get_freeze_count(), len(gc.get_objects()), "openai" in __import__("sys").modules)
"""


def test_a_started_worker_freezes_django_the_app_and_the_llm_client(tmp_path):
    env = {
        **os.environ,
        "ASSESSOR_VAR_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "assessor.project.settings",
        # No endpoint and no broker service: the worker starts all the same, and freezes all the same.
        "LLM_MODEL": "",
        "CELERY_BROKER_URL": f"filesystem://{tmp_path}",
    }
    done = subprocess.run(
        [sys.executable, "-c", STARTED], cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=True
    )
    loaded, frozen, left, openai_loaded = done.stdout.split()
    assert openai_loaded == "True"
    # Everything the collector tracked before the worker prepared, and the LLM client's library loaded since.
    assert int(frozen) > int(loaded) > 50_000
    # What the collector still walks on a full pass: next to nothing.
    assert int(left) < 1_000
