"""Demo content for a fresh machine: MedVidBench with the synthetic test set, the published
official rows of spec 7, and a few community entries scored from generated predictions.

`load_demo` is what `manage.py load_demo` (and so `make run`) calls. It goes through the same
services as the web pages, so the demo board is built exactly as a real one is. Idempotent:
each step looks for what it would create first. Never run it against a real deployment: it
refuses to import the synthetic test set over a different active one.

Apps above this one add their part of the demo through a hook (`add_demo_hook`, called at the
end of `load_demo` with a `DemoLoaded`, and again for each plugin's demo with its `files`):
`verifying` puts the media a re-run sends in place and registers the stand-in model's endpoint
for the demo entries.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.utils import timezone

from accounts.roles import ensure_maintainers_group
from benchmark.models import Benchmark
from benchmark.plugins import BenchmarkPlugin, DemoFiles, plugins
from benchmark.plugins import DemoEntry as PluginDemoEntry
from benchmark.selectors import active_testset
from benchmark.services import ensure_benchmark, ensure_plugin_benchmark, import_testset
from core.exceptions import DomainError
from plugins.medvidbench.demo_testset import DEMO_FILENAMES, write_demo_files

from .models import Evaluation, Submission
from .services import (
    SubmissionDetails,
    create_submission,
    import_published_result,
    recompute_board,
    score_evaluation,
)

PUBLISHED_RESULTS_PATH = Path(__file__).resolve().parent / "data" / "medvidbench_published.json"

# The account a visitor can sign in with to try the site (local accounts are on in dev).
DEMO_USERNAME = "demo"
DEMO_PASSWORD = "podium-demo"
# A maintainer for walking the verification path in the demo (staff, in the Maintainers group:
# the admin's console, no superuser powers). Development machines only, like all of load_demo.
DEMO_MAINTAINER_USERNAME = "maintainer"
DEMO_MAINTAINER_PASSWORD = "podium-maintainer"


@dataclass(frozen=True)
class PublishedResult:
    model_name: str
    is_baseline: bool
    verified_on: date
    values: dict[str, float | None]


@dataclass(frozen=True)
class DemoEntry:
    """A demo submission: a generated predictions file submitted by the demo user."""

    model_name: str
    predictions: str  # a key of plugins.medvidbench.demo_testset.DEMO_FILENAMES
    publish: bool
    institution: str
    team_name: str = ""


DEMO_ENTRIES = (
    DemoEntry(
        "SurgiDemo-7B (synthetic)",
        "noisy",
        publish=True,
        institution="Podium demo data",
        team_name="Demo fine-tuners",
    ),
    DemoEntry("ChattyVLM (synthetic)", "prose", publish=True, institution="Podium demo data"),
    DemoEntry(
        "SurgiDemo-7B-private (synthetic)", "noisy", publish=False, institution="Podium demo data"
    ),
)


@dataclass(frozen=True)
class DemoLoaded:
    """What a demo hook is given: the benchmark, where the demo files are, every demo entry
    with its submission, the stand-in model's base URL ("" for none) and the log. For a
    plugin's demo (`load_plugin_demo`) `files` is what its `write_demo` wrote and the entries
    are the plugin's `DemoEntry`s; None for MedVidBench's, whose entries are `DEMO_ENTRIES`."""

    benchmark: Benchmark
    demo_dir: Path
    entries: list[tuple[DemoEntry, Submission]] | list[tuple[PluginDemoEntry, Submission]]
    standin_model_url: str
    log: Callable[[str], Any]
    files: DemoFiles | None = None


_demo_hooks: list[Callable[[DemoLoaded], None]] = []


def add_demo_hook(hook: Callable[[DemoLoaded], None]) -> None:
    """Call `hook(loaded)` at the end of every `load_demo` (idempotent hooks only)."""
    if hook not in _demo_hooks:
        _demo_hooks.append(hook)


@dataclass(frozen=True)
class DemoSummary:
    benchmark: Benchmark
    imported: int
    submitted: int
    official: int
    community: int


def published_results(path: Path = PUBLISHED_RESULTS_PATH) -> list[PublishedResult]:
    """The official board's published rows (spec 7), read from the data file."""
    rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    return [
        PublishedResult(
            model_name=row["model_name"],
            is_baseline=row["is_baseline"],
            verified_on=date.fromisoformat(row["verified_on"]),
            values=row["values"],
        )
        for row in rows
    ]


def load_demo(
    demo_dir: Path,
    *,
    log: Callable[[str], Any] = lambda message: None,
    standin_model_url: str = "",
) -> DemoSummary:
    """Set up the demo: benchmark, synthetic test set, published rows, demo user and entries.

    Writes the demo files into `demo_dir` when the ground truth is missing there, imports
    the test set (a no-op once imported), imports each published row not yet on the board,
    creates the demo user and submits and scores (synchronously, so no worker is needed)
    each demo entry it does not have yet, recomputes the board, then calls the demo hooks
    (`add_demo_hook`) with `standin_model_url`. Raises `DomainError` if the benchmark's
    active test set is not the demo one.
    """
    benchmark = ensure_plugin_benchmark("medvidbench")
    ground_truth = demo_dir / DEMO_FILENAMES["ground_truth"]
    if not ground_truth.exists():
        log(f"Writing the synthetic test set and predictions to {demo_dir} ...")
        write_demo_files(demo_dir)
    active = active_testset(benchmark)
    checksum = hashlib.sha256(ground_truth.read_bytes()).hexdigest()
    if active is not None and active.checksum != checksum:
        raise DomainError(
            f"{benchmark.name}'s active test set (v{active.version}) is not the demo test set; "
            "load_demo only sets up development machines and will not replace it."
        )
    import_testset(benchmark, ground_truth, notes="synthetic demo test set")

    imported = 0
    for row in published_results():
        if Submission.objects.filter(
            benchmark=benchmark, publish=True, model_name__iexact=row.model_name
        ).exists():
            continue
        import_published_result(
            benchmark,
            model_name=row.model_name,
            values=row.values,
            verified_at=timezone.make_aware(datetime.combine(row.verified_on, time(12))),
            is_baseline=row.is_baseline,
            note="published official result (spec 7), demo data",
        )
        imported += 1
    log(f"Imported {imported} published results.")

    user = _demo_user()
    _demo_maintainer()
    submitted = 0
    for entry in DEMO_ENTRIES:
        if Submission.objects.filter(
            benchmark=benchmark, owner=user, model_name=entry.model_name
        ).exists():
            continue
        log(f"Scoring the demo entry {entry.model_name} ...")
        submission = create_submission(
            benchmark,
            owner=user,
            details=SubmissionDetails(
                model_name=entry.model_name,
                institution=entry.institution,
                contact_email="demo@example.org",
                team_name=entry.team_name,
                publish=entry.publish,
            ),
            predictions=(demo_dir / DEMO_FILENAMES[entry.predictions]).read_bytes(),
        )
        # The worker would do this; doing it here gives a living board without one. (The job
        # create_submission queued finds the run scored and leaves it alone.)
        run = score_evaluation(submission.evaluations.get())
        # Loaded by the demo, not asked for by the person: the account starts the day with its
        # whole quota (issue 13).
        Evaluation.objects.filter(pk=run.pk).update(requested_by=None)
        submitted += 1

    rows = recompute_board(benchmark)
    official = sum(row.board == "official" for row in rows)
    entries = [
        (
            entry,
            Submission.objects.get(benchmark=benchmark, owner=user, model_name=entry.model_name),
        )
        for entry in DEMO_ENTRIES
    ]
    loaded = DemoLoaded(benchmark, demo_dir, entries, standin_model_url, log)
    for hook in _demo_hooks:
        hook(loaded)
    for key, plugin in sorted(plugins().items()):
        if key != benchmark.plugin:  # MedVidBench's demo is the one above
            load_plugin_demo(
                plugin,
                demo_dir / key,
                user=user,
                log=log,
                standin_model_url=standin_model_url,
            )
    return DemoSummary(benchmark, imported, submitted, official, len(rows) - official)


def load_plugin_demo(
    plugin: BenchmarkPlugin,
    demo_dir: Path,
    *,
    user: Any,
    log: Callable[[str], Any],
    standin_model_url: str = "",
) -> Benchmark | None:
    """A plugin's demo (`write_demo`, `published_rows`): its benchmark, the synthetic test set,
    the published rows as imported baselines and the example entries, submitted by `user` and
    scored here, as `load_demo` does for MedVidBench, then the demo hooks with the plugin's
    files. Idempotent. None for a plugin without a demo. Refuses (DomainError) to replace an
    active test set that is not the demo's."""
    files = plugin.write_demo(demo_dir)
    if files is None:
        return None
    benchmark = ensure_benchmark(plugin.definition)
    active = active_testset(benchmark)
    checksum = hashlib.sha256(files.test_set.read_bytes()).hexdigest()
    if active is not None and active.checksum != checksum:
        raise DomainError(
            f"{benchmark.name}'s active test set (v{active.version}) is not the demo test set; "
            "load_demo only sets up development machines and will not replace it."
        )
    import_testset(benchmark, files.test_set, notes="synthetic demo test set")
    imported = 0
    for row in plugin.published_rows():
        if Submission.objects.filter(
            benchmark=benchmark, publish=True, model_name__iexact=row.model_name
        ).exists():
            continue
        import_published_result(
            benchmark,
            model_name=row.model_name,
            values=dict(row.values),
            verified_at=timezone.make_aware(datetime.combine(row.published_on, time(12))),
            is_baseline=row.is_baseline,
            model_url=row.model_url,
            note="published result, demo data",
        )
        imported += 1
    submitted = 0
    for entry in files.entries:
        if Submission.objects.filter(
            benchmark=benchmark, owner=user, model_name=entry.model_name
        ).exists():
            continue
        log(f"Scoring the {benchmark.name} demo entry {entry.model_name} ...")
        submission = create_submission(
            benchmark,
            owner=user,
            details=SubmissionDetails(
                model_name=entry.model_name,
                institution=entry.institution,
                contact_email="demo@example.org",
                team_name=entry.team_name,
                publish=entry.publish,
                options=dict(entry.options),
            ),
            predictions=entry.predictions.read_bytes(),
        )
        run = score_evaluation(submission.evaluations.get())
        Evaluation.objects.filter(pk=run.pk).update(requested_by=None)
        submitted += 1
    recompute_board(benchmark)
    log(f"{benchmark.name}: {imported} published results imported, {submitted} entries scored.")
    entries = [
        (
            entry,
            Submission.objects.get(benchmark=benchmark, owner=user, model_name=entry.model_name),
        )
        for entry in files.entries
    ]
    loaded = DemoLoaded(benchmark, demo_dir, entries, standin_model_url, log, files=files)
    for hook in _demo_hooks:
        hook(loaded)
    return benchmark


def _demo_maintainer() -> Any:
    user, created = get_user_model().objects.get_or_create(
        username=DEMO_MAINTAINER_USERNAME,
        defaults={"email": "maintainer@example.org", "is_staff": True},
    )
    if created:
        user.set_password(DEMO_MAINTAINER_PASSWORD)
        user.save(update_fields=["password"])
    user.groups.add(ensure_maintainers_group())
    return user


def _demo_user() -> Any:
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(
        username=DEMO_USERNAME, defaults={"email": "demo@example.org"}
    )
    if created:
        user.set_password(DEMO_PASSWORD)
        user.save(update_fields=["password"])
    return user
