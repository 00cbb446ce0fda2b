"""Every command starts Django: what it imports at start is paid by all of them (and by the demo's first page).
The heavy libraries are imported by the code that needs them, when it runs."""

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# scipy.stats about 1.2 s, openai 0.6 s, matplotlib 0.4 s on a 2-core machine (python -X importtime manage.py check).
HEAVY = ("scipy.stats", "openai", "matplotlib")

STARTUP = """
import json, os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assessor.project.settings")
import django
django.setup()
from django.urls import get_resolver
get_resolver().url_patterns  # every app's URLs, hence every view module
from django.core.management import get_commands, load_command_class
for name, app in get_commands().items():
    load_command_class(app, name)  # every command module, as `manage.py help` loads them
print(json.dumps(sorted(name for name in %r if name in sys.modules)))
"""


def test_starting_the_project_imports_no_heavy_library():
    result = subprocess.run(
        [sys.executable, "-c", STARTUP % (HEAVY,)], cwd=REPO, capture_output=True, text=True, timeout=120,
        env={name: value for name, value in os.environ.items() if name != "DJANGO_SETTINGS_MODULE"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1]) == []
