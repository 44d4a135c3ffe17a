"""`manage.py score` starts without what only the web, the admin or the demo need (issue 16).

A fresh process runs the command under `python -X importtime`, which names every module it
imports; none of those below may be among them. Each was imported before and cost start-up
time (docs/performance.md): the OpenAI client, DRF's views and serializers with drf-spectacular
(api.schema, loaded by ApiConfig.ready), every app's admin module (Django's admin
autodiscovery at app load), the URLconf and the views they import, the plugins' demo
writers, and the safetensors package (the weights file is read by our own reader); and since
the command runs without `django.setup()` (core/command_line.py), no app's models and no
app's `ready()` (allauth's imports its providers).
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
    # No app is loaded at all (core/command_line.py): no model, no ready() hook.
    "django.contrib.auth.models",
    "django.contrib.admin",
    "allauth.socialaccount.providers",
    "accounts.models",
    "benchmark.models",
    "submissions.models",
    "judging.models",
    "verifying.models",
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


def test_the_command_runs_the_judge_step_without_the_apps(tmp_path):
    """The judge options through the same process path: the judge client, its settings and the
    plugin's judge step need no app either."""
    from judging.standin import StandinJudge
    from tests.judging.conftest import CAPTION_PREDICTIONS, caption_ground_truth

    records = caption_ground_truth()
    ground_truth = tmp_path / "gt.json"
    ground_truth.write_text(json.dumps(records))
    predictions = tmp_path / "predictions.json"
    predictions.write_text(json.dumps(rows_for(make_test_set(*records), CAPTION_PREDICTIONS)))
    command = [sys.executable, "manage.py", "score", "--ground-truth", str(ground_truth)]
    command += [str(predictions), "--format", "json", "--judge-model", "standin-judge"]
    with StandinJudge() as judge:
        done = subprocess.run(
            [*command, "--judge-base-url", judge.base_url],
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"},
        )
    assert done.returncode == 0, done.stderr[-3000:]
    metrics = json.loads(done.stdout)["metrics"]
    assert all(isinstance(metrics[key], float) for key in ("DVC_llm", "VS_llm", "RC_llm"))


def test_the_settings_option_is_read_before_the_settings(tmp_path):
    records = [gt_record("tal", "0.0-10.0 seconds.", [{"spans": [{"start": 0, "end": 10}]}])]
    ground_truth = tmp_path / "gt.json"
    ground_truth.write_text(json.dumps(records))
    predictions = tmp_path / "predictions.json"
    predictions.write_text(json.dumps(rows_for(make_test_set(*records), ["0.0-5.0"])))
    command = [sys.executable, "manage.py", "score", "--ground-truth", str(ground_truth)]
    command += [str(predictions), "--format", "json"]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.no_such_module"}
    run = {"cwd": PROJECT_ROOT, "capture_output": True, "text": True, "env": env}
    refused = subprocess.run(command, **run)
    assert refused.returncode != 0
    assert "config.settings.no_such_module" in refused.stderr
    done = subprocess.run([*command, "--settings", "config.settings.test"], **run)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["metrics"]["TAG_mIoU@0.3"] == 0.5
