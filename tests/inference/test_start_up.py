"""Start-up (issue 16): a process that never talks to an endpoint does not import the HTTP
transport (httpcore2, ~0.27 s): Django's set-up of every app, the score command's module, the
engine's client and answering modules and the judge's client module leave it out until a
`ChatClient` is made."""

import subprocess
import sys

import pytest

pytestmark = [pytest.mark.integration]

PROGRAM = """
import os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
import django
django.setup()
import inference.answering, inference.client, judging.client, judging.management.commands.score, verifying.services
before = "httpcore2" in sys.modules
inference.client.ChatClient(inference.client.EndpointConfig(base_url="http://127.0.0.1:9/v1", model="m", api_key=""))
print(before, "httpcore2" in sys.modules)
"""


def test_the_transport_is_imported_by_the_first_client_not_at_start_up():
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.split() == ["False", "True"]
