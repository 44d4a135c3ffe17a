"""The re-run's part of the demo (`make run`): the media a re-run of each benchmark's demo test
set sends (its plugin's `rerun.write_demo_media`: MedVidBench's synthetic frames under
frames/ of the private store, MedSG-Bench's images copied to frames/medsg-bench/), the answers
of the stand-in model (`manage.py standin_model`), and that stand-in registered as the demo
entries' model endpoint, so a maintainer can take an entry from the Community board to the
Official one through a real re-run on a fresh machine.

The stand-in model (`verifying.standin.StandinModel`) is NOT a real model: it plays back the
demo's predictions files (every file a plugin's `write_demo` names: its entries', its
`hosted` models' and its `playback` ones), one model per file (`standin_model_name`): MedVidBench's `standin-noisy`,
`standin-perfect`, `standin-prose` and `standin-new` (the file no demo entry has,
`predictions_new.json`, which a visitor uploads), MedSG-Bench's
`standin-medsg-bench-<file>`. Each answers a test question (known by its text and the media sent
with it, `request_key`) with that question's prediction in its file; so the re-run of an entry
uploaded from one of these files reproduces its self-reported numbers and the discrepancy report
is within the tolerance. Like a real model it answers one request one way: where a file answers
the same question on the same clip differently (`predictions_perfect.json` does, being the
references of the gpt and gemini caption variants), it answers with the first, and the report
shows what that costs (DVC_F1 0.13 below for the perfect file).

`load_demo` (submissions/demo.py) calls `on_demo_loaded` through its hook (VerifyingConfig.ready),
once per benchmark.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from benchmark.media import Folder
from benchmark.plugins import (
    DEFAULT_PLUGIN,
    BenchmarkPlugin,
    plugin_for,
    plugins,
)
from core import private_files
from submissions.demo import STANDIN_PREFIX, DemoLoaded, standin_model_name

from .config import media_root
from .services import active_endpoint, register_endpoint
from .standin import content_key

# Found here too (the re-run's demo named them first; `hosting`'s demo uses them as well).
__all__ = ["STANDIN_PREFIX", "standin_model_name"]
# The demo endpoints' settings: 16 questions in flight finish the 6,245 of the demo test set in
# well under a minute against the stand-in (docs/verification.md has the figures).
DEMO_ENDPOINT_SETTINGS = {"concurrency": 16, "max_attempts": 5, "timeout_seconds": 30.0}


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


def demo_answer_tables(
    demo_dir: Path | None,
    max_media: Callable[[BenchmarkPlugin], int],
    *,
    frames_root: Folder | None = None,
    only: str | None = None,
    log: Callable[[str], Any] = lambda message: None,
) -> dict[str, dict[str, str]]:
    """`answer_tables` for every plugin's demo: a model per predictions file its `write_demo`
    names (the entries' and `playback`'s, `standin_model_name`). The default plugin's demo is
    read from `demo_dir` (`FileNotFoundError` without its ground truth: run load_demo); the
    others' are written again to a temporary folder (the same bytes as `load_demo`'s). A
    plugin whose media are not in place is left out, and said so in `log`. `frames_root`
    stands for the private store's frames/ (a local folder: the stand-in's --frames-dir);
    `only` keeps one plugin's."""
    tables: dict[str, dict[str, str]] = {}
    for key, plugin in sorted(plugins().items()):
        if plugin.rerun is None or (only is not None and key != only):
            continue
        with tempfile.TemporaryDirectory() as scratch:
            if key == DEFAULT_PLUGIN:
                if demo_dir is None or not demo_dir.exists():
                    raise FileNotFoundError(f"no demo files in {demo_dir}")
                folder = demo_dir
            else:
                folder = Path(scratch)
            files = plugin.write_demo(folder)
            if files is None:
                continue
            test_set = plugin.read_test_set(files.test_set.read_bytes())
            root = media_root(plugin.definition, plugin.rerun, top=frames_root)
            limit = max_media(plugin)
            missing = plugin.rerun.missing_media(test_set, root, limit)
            if missing:
                log(
                    f"{plugin.definition.name}: {len(missing)} demo {plugin.rerun.media_label} "
                    f"files are missing under {root}; its entries are not served (run load_demo)."
                )
                continue
            sources = {
                standin_model_name(key, entry.predictions): (entry.predictions, entry.options)
                # The hosted demo models' files too: the queue's requests ask the stand-in.
                for entry in (*files.entries, *files.hosted)
            }
            for path in files.playback:
                if path.exists():
                    sources.setdefault(standin_model_name(key, path), (path, {}))
            tables.update(
                answer_tables(
                    plugin,
                    test_set,
                    {model: path.read_bytes() for model, (path, _) in sources.items()},
                    root,
                    limit,
                    options={model: options for model, (_, options) in sources.items()},
                )
            )
    return tables


def on_demo_loaded(loaded: DemoLoaded) -> None:
    """`load_demo`'s hook, once per benchmark: put the media a re-run of its demo test set sends
    in place (its plugin's `rerun.write_demo_media`: MedVidBench's synthetic frames under
    frames/ of the private store, MedSG-Bench's images copied to frames/medsg-bench/), and with
    a stand-in model URL make the stand-in the model endpoint of every demo entry meant for
    the boards (keyless). Idempotent: an entry whose active endpoint is already that one keeps
    it."""
    plugin = plugin_for(loaded.benchmark)
    if plugin.rerun is None:
        return  # its model cannot be re-run: nothing to put in place
    test_set = plugin.read_test_set(loaded.files.test_set.read_bytes())
    folder = media_root(loaded.benchmark, plugin.rerun)
    local = folder.local_folder()
    if local is not None:
        _, line = plugin.rerun.write_demo_media(
            loaded.files, test_set, local, loaded.benchmark.rerun_max_frames
        )
    else:
        # The store is S3: the plugin writes its media to a folder of this machine, whose
        # files not yet in the store are then uploaded (docs/storage.md).
        staging = private_files.cache_dir() / "demo-media" / folder.prefix
        _, line = plugin.rerun.write_demo_media(
            loaded.files, test_set, staging, loaded.benchmark.rerun_max_frames
        )
        uploaded = private_files.upload_folder(staging, folder.prefix)
        line += f" {uploaded} of them uploaded to the private store's {folder.prefix}/."
    loaded.log(line)
    _register_standins(loaded, lambda entry: standin_model_name(plugin.key, entry.predictions))


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
