"""The re-run's part of the demo (`make run`): the demo test set's frames under
PODIUM_FRAMES_DIR, the answers of the stand-in model (`manage.py standin_model`), and that
stand-in registered as the demo entries' model endpoint, so a maintainer can take an entry from
the Community board to the Official one through a real re-run on a fresh machine.

The stand-in model (`verifying.standin.StandinModel`) is NOT a real model: it plays back the
demo's predictions files. The model `standin-noisy` answers each test question (known by its
text and the frames sent with it, `request_key`) with that question's prediction in
`predictions_noisy.json`, and likewise `standin-perfect`, `standin-prose` and `standin-new` (the
file no demo entry has, `predictions_new.json`, which a visitor uploads); so the re-run of
an entry uploaded from the noisy or the prose file reproduces its self-reported numbers and the
discrepancy report is within the tolerance. Like a real model it answers one request one way:
where a file answers the same question on the same clip differently (`predictions_perfect.json`
does, being the references of the gpt and gemini caption variants), it answers with the first,
and the report shows what that costs (DVC_F1 0.13 below for the perfect file). An entry
uploaded from another file is re-run against whichever model is registered, and its report
shows the discrepancies.

`load_demo` (submissions/demo.py) calls `on_demo_loaded` through its hook (VerifyingConfig.ready).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from pathlib import Path

from django.conf import settings

from benchmark import scoring
from benchmark.demo_testset import DEMO_FILENAMES, NEW_MODEL, PREDICTION_KINDS
from benchmark.demo_testset.frames import write_frames
from benchmark.models import Benchmark
from submissions.demo import DemoLoaded

from . import frames
from .services import active_endpoint, register_endpoint
from .standin import request_key

STANDIN_PREFIX = "standin-"
# The demo endpoints' settings: 16 questions in flight finish the 6,245 of the demo test set in
# well under a minute against the stand-in (docs/verification.md has the figures).
DEMO_ENDPOINT_SETTINGS = {"concurrency": 16, "max_attempts": 5, "timeout_seconds": 30.0}
FRAMES_STAMP = ".demo-frames"


def standin_model_name(kind: str) -> str:
    """The stand-in's model that plays back `predictions_<kind>.json`."""
    return f"{STANDIN_PREFIX}{kind}"


def answer_tables(
    test_set: scoring.TestSet, predictions: Mapping[str, bytes], root: Path, max_frames: int
) -> dict[str, dict[str, str]]:
    """model -> request key -> answer, for `StandinModel(models=...)`: each model answers a
    question, with the frames a re-run reads from `root` and sends (at most `max_frames`), by
    the prediction its file has for it (the first, where it has several)."""
    urls: dict[tuple[str, ...], list[str]] = {}  # the questions on one clip share its frames
    keys = []
    for sample in test_set.samples:
        if sample.frames not in urls:
            urls[sample.frames] = frames.frame_urls(sample, root, max_frames)
        keys.append(request_key(sample.question, urls[sample.frames]))
    tables: dict[str, dict[str, str]] = {}
    for model, raw in predictions.items():
        table: dict[str, str] = {}
        for key, text in zip(keys, scoring.load_predictions(raw, test_set), strict=True):
            table.setdefault(key, text)
        tables[model] = table
    return tables


def demo_answer_tables(demo_dir: Path, root: Path, max_frames: int) -> dict[str, dict[str, str]]:
    """`answer_tables` for the demo files in `demo_dir`: `standin-<kind>` for each predictions
    file there (`FileNotFoundError` when there is none)."""
    test_set = scoring.load_ground_truth(demo_dir / DEMO_FILENAMES["ground_truth"])
    files = {kind: demo_dir / DEMO_FILENAMES[kind] for kind in (*PREDICTION_KINDS, NEW_MODEL)}
    predictions = {
        standin_model_name(kind): path.read_bytes() for kind, path in files.items() if path.exists()
    }
    if not predictions:
        raise FileNotFoundError(f"no predictions file in {demo_dir}")
    return answer_tables(test_set, predictions, root, max_frames)


def write_demo_frames(
    benchmark: Benchmark, demo_dir: Path, root: Path, *, log=lambda message: None
) -> int:
    """Write the frames a re-run of the demo test set sends under `root`, unless a stamp there
    says they were written for this very ground truth and frame limit. Returns how many frame
    paths were written (0 when they were in place)."""
    ground_truth = (demo_dir / DEMO_FILENAMES["ground_truth"]).read_bytes()
    stamp = f"{hashlib.sha256(ground_truth).hexdigest()} max_frames={benchmark.rerun_max_frames}\n"
    stamp_path = root / FRAMES_STAMP
    if stamp_path.is_file() and stamp_path.read_text() == stamp:
        log(f"The demo frames are in place under {root}.")
        return 0
    started = time.perf_counter()
    count = write_frames(root, json.loads(ground_truth), max_frames=benchmark.rerun_max_frames)
    stamp_path.write_text(stamp)
    log(
        f"Wrote the {count} demo frames a re-run sends under {root} in "
        f"{time.perf_counter() - started:.1f} s (one tiny PNG per clip, hard links for the rest)."
    )
    return count


def on_demo_loaded(loaded: DemoLoaded) -> None:
    """`load_demo`'s hook: write the demo frames under PODIUM_FRAMES_DIR, and with a stand-in
    model URL make the stand-in the model endpoint of every demo entry meant for the boards
    (its `standin-<kind>` model; keyless). Idempotent: an entry whose active endpoint is
    already that one keeps it."""
    write_demo_frames(
        loaded.benchmark, loaded.demo_dir, Path(settings.PODIUM_FRAMES_DIR), log=loaded.log
    )
    if not loaded.standin_model_url:
        return
    registered = []
    for entry, submission in loaded.entries:
        if not entry.publish:
            continue  # evaluate-only: it never reaches a board, so it is never verified
        model = standin_model_name(entry.predictions)
        current = active_endpoint(submission)
        if current is not None and (current.base_url, current.model) == (
            loaded.standin_model_url,
            model,
        ):
            continue
        register_endpoint(
            submission,
            actor=None,
            base_url=loaded.standin_model_url,
            model=model,
            **DEMO_ENDPOINT_SETTINGS,
        )
        registered.append(submission.model_name)
    if registered:
        loaded.log(
            f"Registered the stand-in model at {loaded.standin_model_url} for "
            f"{', '.join(registered)}."
        )
