"""Demo content for a fresh machine: every installed benchmark plugin's demo (its `write_demo`:
a synthetic test set and example predictions; its `published_rows`: results imported as
verified baselines), each entry submitted by the demo account and scored here, plus the demo
account and a demo maintainer. MedVidBench's (the default plugin's) files sit at the top of the
demo folder (`var/demo/`, the README's paths), every other plugin's in a folder named after it
(`var/demo/medsg-bench/`).

`load_demo` is what `manage.py load_demo` (and so `make run`) calls. It goes through the same
services as the web pages, so a demo board is built exactly as a real one is. Idempotent: each
step looks for what it would create first. Never run it against a real deployment: it refuses
to import a synthetic test set over a different active one.

Apps above this one add their part of the demo through a hook (`add_demo_hook`, called with a
`DemoLoaded` once per benchmark): `verifying` puts the media a re-run sends in place and
registers the stand-in model's endpoint for the demo entries; `hosting` queues a hosted
evaluation of the stand-in model for each of a plugin's `hosted` demo models. Both name a
demo file's stand-in model with `standin_model_name`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, time
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.utils import timezone

from accounts.roles import ensure_maintainers_group
from benchmark.models import Benchmark
from benchmark.plugins import DEFAULT_PLUGIN, BenchmarkPlugin, DemoEntry, DemoFiles, plugins
from benchmark.selectors import active_testset
from benchmark.services import ensure_benchmark, import_testset
from core.exceptions import DomainError

from . import hooks
from .models import Evaluation, Submission
from .services import (
    SubmissionDetails,
    create_submission,
    import_published_result,
    recompute_board,
    score_evaluation,
)

# The account a visitor can sign in with to try the site (local accounts are on in dev).
DEMO_USERNAME = "demo"
DEMO_PASSWORD = "podium-demo"
# A maintainer for walking the verification path in the demo (staff, in the Maintainers group:
# the admin's console, no superuser powers). Development machines only, like all of load_demo.
DEMO_MAINTAINER_USERNAME = "maintainer"
DEMO_MAINTAINER_PASSWORD = "podium-maintainer"


STANDIN_PREFIX = "standin-"


def standin_model_name(plugin_key: str, predictions: Path) -> str:
    """The demo stand-in model's name for the model that plays back a demo predictions file
    (`manage.py standin_model`, verifying/demo.py): for the default plugin (MedVidBench)
    `standin-<kind>` for `predictions_<kind>.json` (`standin-noisy`), for another one
    `standin-<plugin key>-<kind>` (`standin-medsg-bench-pixel_near_perfect`)."""
    kind = predictions.stem.removeprefix("predictions_")
    if plugin_key == DEFAULT_PLUGIN:
        return f"{STANDIN_PREFIX}{kind}"
    return f"{STANDIN_PREFIX}{plugin_key}-{kind}"


@dataclass(frozen=True)
class DemoLoaded:
    """What a demo hook is given for one benchmark: the benchmark, where its demo files are,
    what its plugin's `write_demo` wrote (`files`), every demo entry with its submission, the
    stand-in model's base URL ("" for none) and the log."""

    benchmark: Benchmark
    demo_dir: Path
    entries: list[tuple[DemoEntry, Submission]]
    standin_model_url: str
    log: Callable[[str], Any]
    files: DemoFiles


def add_demo_hook(hook: Callable[[DemoLoaded], None]) -> None:
    """Call `hook(loaded)` at the end of every `load_demo` (idempotent hooks only)."""
    hooks.add_demo_hook(hook)


@dataclass(frozen=True)
class DemoSummary:
    benchmark: Benchmark
    imported: int
    submitted: int
    official: int
    community: int


def load_demo(
    demo_dir: Path,
    *,
    log: Callable[[str], Any] = lambda message: None,
    standin_model_url: str = "",
) -> DemoSummary:
    """Set up the demo: the demo account and maintainer, then every installed plugin's demo
    (`load_plugin_demo`), the default plugin's (MedVidBench) first and in `demo_dir` itself,
    each other one in `demo_dir/<plugin key>`. Returns the default plugin's summary. Raises
    `DomainError` if a benchmark's active test set is not the demo one."""
    user = _demo_user()
    _demo_maintainer()
    summary = None
    for key, plugin in sorted(plugins().items(), key=lambda item: item[0] != DEFAULT_PLUGIN):
        folder = demo_dir if key == DEFAULT_PLUGIN else demo_dir / key
        loaded = load_plugin_demo(
            plugin, folder, user=user, log=log, standin_model_url=standin_model_url
        )
        if summary is None and loaded is not None:
            summary = loaded
    assert summary is not None, "no installed plugin has a demo"
    return summary


def load_plugin_demo(
    plugin: BenchmarkPlugin,
    demo_dir: Path,
    *,
    user: Any,
    log: Callable[[str], Any],
    standin_model_url: str = "",
) -> DemoSummary | None:
    """A plugin's demo (`write_demo`, `published_rows`): its benchmark, the synthetic test set,
    the published rows as imported baselines and the example entries, submitted by `user` and
    scored here (the worker would; a living board needs none), then the demo hooks with the
    plugin's files. Idempotent. None for a plugin without a demo. Refuses (DomainError) to
    replace an active test set that is not the demo's."""
    if not demo_dir.exists() or not any(demo_dir.iterdir()):
        log(f"Writing the {plugin.definition.name} demo files to {demo_dir} ...")
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
            note=row.note,
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
                model_facts=dict(entry.facts),
            ),
            predictions=entry.predictions.read_bytes(),
        )
        run = score_evaluation(submission.evaluations.get())
        # Loaded by the demo, not asked for by the person: the account starts the day with its
        # whole quota (issue 13).
        Evaluation.objects.filter(pk=run.pk).update(requested_by=None)
        submitted += 1
    rows = recompute_board(benchmark)
    log(f"{benchmark.name}: {imported} published results imported, {submitted} entries scored.")
    entries = [
        (
            entry,
            Submission.objects.get(benchmark=benchmark, owner=user, model_name=entry.model_name),
        )
        for entry in files.entries
    ]
    loaded = DemoLoaded(benchmark, demo_dir, entries, standin_model_url, log, files=files)
    for hook in hooks.demo_hooks:
        hook(loaded)
    official = sum(row.board == "official" for row in rows)
    return DemoSummary(benchmark, imported, submitted, official, len(rows) - official)


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
