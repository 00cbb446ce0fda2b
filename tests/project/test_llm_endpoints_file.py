"""The LLM_ENDPOINTS file: its endpoints read with their defaults, and every mistake named by file, endpoint and field."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from assessor.project.llm_endpoints import EndpointsFileInvalid, endpoints_file_read

REPO = Path(__file__).resolve().parents[2]

GOOD = """
[endpoints.gpt4o]
base_url = "https://api.openai.com/v1"
api_key_env = "OPENAI_API_KEY"
model = "gpt-4o"
concurrency = 16
price_input = 2.5
price_output = 10

[endpoints.local-llama]
base_url = "http://127.0.0.1:8000/v1"
model = "llama-3.1-8b"
"""


def test_a_file_gives_each_endpoint_its_fields_and_the_defaults(write_file):
    endpoints = endpoints_file_read(write_file("endpoints.toml", GOOD))
    assert list(endpoints) == ["gpt4o", "local-llama"]
    assert endpoints["gpt4o"] == {
        "base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY", "model": "gpt-4o",
        "api_version": "", "concurrency": 16, "price_input": 2.5, "price_output": 10.0, "price_cached_input": None,
        "temperature": 0.0, "timeout": 60.0, "batch": False, "batch_price_factor": 0.5,
    }  # fmt: skip
    # A local server needs no key; the defaults fill the rest.
    assert endpoints["local-llama"]["api_key_env"] == ""
    assert (endpoints["local-llama"]["concurrency"], endpoints["local-llama"]["price_output"]) == (8, 0.0)


@pytest.mark.parametrize(
    "text, message",
    [
        ('[endpoints.a]\nmodel = "m"\nbase_url = "http://h/v1"\nconcurrency = "many"\n',
         "endpoint 'a', field 'concurrency': 'many' is not a whole number"),
        ('[endpoints.a]\nmodel = "m"\nbase_url = "http://h/v1"\nconcurrency = 0\n',
         "endpoint 'a', field 'concurrency': 0 is below 1"),
        ('[endpoints.a]\nmodel = "m"\nbase_url = "http://h/v1"\nkey = "x"\n', "endpoint 'a': unknown field 'key'"),
        ('[endpoints.a]\nmodel = "m"\napi_key_env = "sk-proj-123"\n',
         "endpoint 'a', field 'api_key_env': 'sk-proj-123' is not the name of an environment variable"),
        ('[endpoints.a]\nbase_url = "http://h/v1"\n', "endpoint 'a', field 'model': required"),
        ('[endpoints.a]\nmodel = "m"\n', "endpoint 'a', field 'base_url': required"),
        ('[endpoints.a]\nmodel = "m"\nbase_url = "ftp://h"\n', "field 'base_url': 'ftp://h' is not an http(s) URL"),
        ('[endpoints.default]\nmodel = "m"\nbase_url = "http://h/v1"\n', "'default' is the endpoint of the LLM_* variables"),
        ('[endpoints.A]\nmodel = "m"\nbase_url = "http://h/v1"\n', "endpoint 'A': a name is lower-case letters"),
        ('[endpoint.a]\nmodel = "m"\n', "unknown table 'endpoint'"),
        ('[endpoints.a]\nmodel = "m"\nbase_url = \n', "not TOML: Invalid value (at line 3, column 12)"),
    ],
)  # fmt: skip
def test_a_mistake_names_the_file_the_endpoint_and_the_field(write_file, text, message):
    path = write_file("endpoints.toml", text)
    with pytest.raises(EndpointsFileInvalid) as refused:
        endpoints_file_read(path)
    assert str(refused.value).startswith(f"{path}")
    assert message in str(refused.value)


def test_a_wrong_file_stops_the_start_naming_the_variable(tmp_path):
    path = tmp_path / "endpoints.toml"
    path.write_text('[endpoints.a]\nmodel = "m"\nbase_url = "http://h/v1"\nconcurrency = 0\n')
    environment = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    environment.update(ASSESSOR_VAR_DIR=str(tmp_path), LLM_ENDPOINTS=str(path))
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=REPO, env=environment, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert "ImproperlyConfigured: LLM_ENDPOINTS:" in last_line
    assert f"{path}, endpoint 'a', field 'concurrency': 0 is below 1" in last_line
