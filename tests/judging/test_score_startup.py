"""`manage.py score` starts without what only the web, the admin or the demo need (issue 16).

A fresh process runs the command under `python -X importtime`, which names every module it
imports; none of those below may be among them. Each was imported before and cost start-up
time (docs/performance.md): the OpenAI client, DRF's views and serializers with drf-spectacular
(api.schema, loaded by ApiConfig.ready), every app's admin module (Django's admin
X
writers, and the safetensors package (the weights file is read by our own reader).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.benchmark.scoring.factories import gt_record, make_test_set, rows_for

pytestmark = pytest.mark.integration

PROJECT_ROOT = Path(__file__).resolve().parents[2]
NOT_IMPORTED = (
    "openai",
    "httpx",
    "rest_framework.views",
    "rest_framework.serializers",
    "drf_spectacular.openapi",
    "drf_spectacular.plumbing",
    "api.schema",
    "api.urls",
    "config.urls",
    "submissions.views",
    "submissions.admin",
    "judging.admin",
    "verifying.admin",
    "benchmark.admin",
    "accounts.admin",
    "plugins.medvidbench.demo_testset",
    "plugins.medsg.demo",
    "plugins.clinicalqa.demo",
    "safetensors",
)
# A package counts with everything under it.
NOT_IMPORTED_PREFIXES = tuple(f"{name}." for name in NOT_IMPORTED)


def imported_modules(importtime_output: str) -> set[str]:
    """Module names from `-X importtime` lines: `import time: self | cumulative | name`."""
    names = set()
    for line in importtime_output.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def test_the_score_command_imports_nothing_it_does_not_use(tmp_path):
    records = [
        gt_record("tal", "0.0-10.0 seconds.", [{"spans": [{"start": 0, "end": 10}]}]),
        gt_record("next_action", "tying"),  # an answer that is no label: the encoder loads
    ]
    ground_truth = tmp_path / "gt.json"
    ground_truth.write_text(json.dumps(records))
    predictions = tmp_path / "predictions.json"
    rows = rows_for(make_test_set(*records), ["0.0-5.0", "tie the knot"])
    predictions.write_text(json.dumps(rows))
    command = [sys.executable, "-X", "importtime", "manage.py", "score"]
    command += ["--ground-truth", str(ground_truth), str(predictions), "--format", "json"]
    done = subprocess.run(
        command,
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["metrics"]["NAP_acc"] is not None
    imported = imported_modules(done.stderr)
    assert "plugins.medvidbench.scoring.embedding" in imported  # the check sees the imports
    found = sorted(
        name for name in imported if name in NOT_IMPORTED or name.startswith(NOT_IMPORTED_PREFIXES)
    )
    assert found == []
