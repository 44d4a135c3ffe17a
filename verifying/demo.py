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

A plugin's demo (`load_plugin_demo`, e.g. MedSG-Bench's under `<demo dir>/medsg-bench/`) gets
the same: its hook call copies the media its test set refers to (relative to the test set's
folder) into the benchmark's media folder (`verifying.config.media_root`,
PODIUM_FRAMES_DIR/<slug>/), and registers the stand-in as the model of each published entry,
`standin-<plugin key>-<file>` (`plugin_standin_model_name`), which plays back that entry's
predictions file: for MedSG-Bench a box near the reference in the entry's own box convention,
so its re-run reproduces its numbers.

`load_demo` (submissions/demo.py) calls `on_demo_loaded` through its hook (VerifyingConfig.ready).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from django.conf import settings

from benchmark import media
from benchmark.models import Benchmark
from benchmark.plugins import (
    DEFAULT_PLUGIN,
    BenchmarkPlugin,
    Rerun,
    get_plugin,
    plugin_for,
    plugins,
)
from plugins.medvidbench.demo_testset import DEMO_FILENAMES, NEW_MODEL, PREDICTION_KINDS
from plugins.medvidbench.demo_testset.frames import write_frames
from submissions.demo import DemoLoaded

from .config import media_root
from .services import active_endpoint, register_endpoint
from .standin import content_key

STANDIN_PREFIX = "standin-"
# The demo endpoints' settings: 16 questions in flight finish the 6,245 of the demo test set in
# well under a minute against the stand-in (docs/verification.md has the figures).
DEMO_ENDPOINT_SETTINGS = {"concurrency": 16, "max_attempts": 5, "timeout_seconds": 30.0}
FRAMES_STAMP = ".demo-frames"


def standin_model_name(kind: str) -> str:
    """The stand-in's model that plays back `predictions_<kind>.json`."""
    return f"{STANDIN_PREFIX}{kind}"


def plugin_standin_model_name(key: str, predictions: Path) -> str:
    """The stand-in's model that plays back a plugin demo's predictions file:
    `standin-medsg-bench-pixel_near_perfect` for `predictions_pixel_near_perfect.json`."""
    return f"{STANDIN_PREFIX}{key}-{predictions.stem.removeprefix('predictions_')}"


def answer_text(prediction: Any) -> str:
    """A checked prediction as a model would say it: a text as it is, a box given as a list
    (MedSG-Bench) as the JSON list, which reads back as the same box."""
    return prediction if isinstance(prediction, str) else json.dumps(list(prediction))


def answer_tables(
    plugin: BenchmarkPlugin,
    test_set: Any,
    predictions: Mapping[str, bytes],
    root: Path,
    max_media: int,
    *,
    options: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, dict[str, str]]:
    """model -> request key -> answer, for `StandinModel(models=...)`: each model answers a
    question, with the media a re-run reads from `root` and sends (the plugin's
    `rerun.questions`), by the prediction its file has for it (the first, where it has several
    for one request). `options[model]` are the file's declared options."""
    assert plugin.rerun is not None
    questions = plugin.rerun.questions(test_set, root, max_media, range(len(test_set)))
    keys = [content_key(build()) for _, build in questions]
    tables: dict[str, dict[str, str]] = {}
    for model, raw in predictions.items():
        checked = plugin.check_predictions(
            raw, test_set, options=(options or {}).get(model, {}), max_prediction_chars=None
        )
        table: dict[str, str] = {}
        for key, prediction in zip(keys, checked, strict=True):
            table.setdefault(key, answer_text(prediction))
        tables[model] = table
    return tables


def demo_answer_tables(demo_dir: Path, root: Path, max_frames: int) -> dict[str, dict[str, str]]:
    """`answer_tables` for MedVidBench's demo files in `demo_dir`: `standin-<kind>` for each
    predictions file there (`FileNotFoundError` when there is none)."""
    plugin = get_plugin(DEFAULT_PLUGIN)
    test_set = plugin.read_test_set((demo_dir / DEMO_FILENAMES["ground_truth"]).read_bytes())
    files = {kind: demo_dir / DEMO_FILENAMES[kind] for kind in (*PREDICTION_KINDS, NEW_MODEL)}
    predictions = {
        standin_model_name(kind): path.read_bytes() for kind, path in files.items() if path.exists()
    }
    if not predictions:
        raise FileNotFoundError(f"no predictions file in {demo_dir}")
    return answer_tables(plugin, test_set, predictions, root, max_frames)


def plugin_demo_answer_tables(
    max_media: int, *, log: Callable[[str], Any] = lambda message: None
) -> dict[str, dict[str, str]]:
    """`answer_tables` for every plugin demo whose media are in place (a demo written to a
    temporary folder, the same bytes as `load_demo`'s): `plugin_standin_model_name` for each
    entry. A plugin whose demo media are missing is left out, and said so in `log`."""
    tables: dict[str, dict[str, str]] = {}
    for key, plugin in sorted(plugins().items()):
        rerun = getattr(plugin, "rerun", None)
        if rerun is None:
            continue
        with tempfile.TemporaryDirectory() as folder:
            files = plugin.write_demo(Path(folder))
            if files is None:
                continue
            test_set = plugin.read_test_set(files.test_set.read_bytes())
            root = media_root(plugin.definition, rerun)
            missing = rerun.missing_media(test_set, root, max_media)
            if missing:
                log(
                    f"{plugin.definition.name}: {len(missing)} demo {rerun.media_label} files "
                    f"are missing under {root}; its entries are not served (run load_demo)."
                )
                continue
            models = {
                plugin_standin_model_name(key, entry.predictions): entry for entry in files.entries
            }
            tables.update(
                answer_tables(
                    plugin,
                    test_set,
                    {model: entry.predictions.read_bytes() for model, entry in models.items()},
                    root,
                    max_media,
                    options={model: entry.options for model, entry in models.items()},
                )
            )
    return tables


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


def copy_demo_media(rerun: Rerun, test_set: Any, source: Path, root: Path, max_media: int) -> int:
    """Copy the media a re-run of `test_set` sends from `source` (where the demo wrote them,
    the test set's folder) to `root`, each file whose copy is missing or differs (written
    aside, then moved in place). Returns how many were copied."""
    copied = 0
    for relative in rerun.media_paths(test_set, max_media):
        origin, target = media.media_file(source, relative), media.media_file(root, relative)
        if origin is None or target is None:
            raise ValueError(f"the demo media path {relative!r} points outside its folder")
        content = origin.read_bytes()
        if target.is_file() and target.read_bytes() == content:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=target.parent, suffix=".part")
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(content)
        os.replace(temporary, target)
        copied += 1
    return copied


def on_demo_loaded(loaded: DemoLoaded) -> None:
    """`load_demo`'s hook: write the demo frames under PODIUM_FRAMES_DIR (a plugin's demo: copy
    its media into the benchmark's media folder), and with a stand-in model URL make the
    stand-in the model endpoint of every demo entry meant for the boards (keyless).
    Idempotent: an entry whose active endpoint is already that one keeps it."""
    if loaded.files is not None:
        _on_plugin_demo_loaded(loaded)
        return
    write_demo_frames(
        loaded.benchmark, loaded.demo_dir, Path(settings.PODIUM_FRAMES_DIR), log=loaded.log
    )
    _register_standins(loaded, lambda entry: standin_model_name(entry.predictions))


def _on_plugin_demo_loaded(loaded: DemoLoaded) -> None:
    plugin = plugin_for(loaded.benchmark)
    rerun = getattr(plugin, "rerun", None)
    if rerun is None or loaded.files is None:
        return  # its model cannot be re-run: nothing to put in place
    test_set = plugin.read_test_set(loaded.files.test_set.read_bytes())
    root = media_root(loaded.benchmark, rerun)
    copied = copy_demo_media(
        rerun, test_set, loaded.files.test_set.parent, root, loaded.benchmark.rerun_max_frames
    )
    loaded.log(
        f"{loaded.benchmark.name}: {copied} demo {rerun.media_label} files copied to {root}"
        if copied
        else f"{loaded.benchmark.name}: the demo {rerun.media_label} files are in place "
        f"under {root}."
    )
    _register_standins(
        loaded, lambda entry: plugin_standin_model_name(plugin.key, entry.predictions)
    )


def _register_standins(loaded: DemoLoaded, model_of: Callable[[Any], str]) -> None:
    """With a stand-in model URL, register the stand-in (its model `model_of(entry)`) as the
    endpoint of every published demo entry whose active endpoint is not that one already."""
    if not loaded.standin_model_url:
        return
    registered = []
    for entry, submission in loaded.entries:
        if not entry.publish:
            continue  # evaluate-only: it never reaches a board, so it is never verified
        model = model_of(entry)
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
