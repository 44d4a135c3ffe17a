"""Writes for benchmarks, their metrics and their test sets.

Every function owns its transaction and leaves one audit row per action it performs (none when
it changes nothing). Interfaces (commands, admin, later views and the API) call these and
translate ``DomainError`` for their audience.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import Max

from benchmark.definitions import BenchmarkDefinition, CategoryDefinition, MetricDefinition
from benchmark.models import Benchmark, Category, Metric, TestSet
from benchmark.plugins import get_plugin, plugin_for
from benchmark.scoring.errors import GroundTruthError
from benchmark.scoring.ranking import ranking_order_problem
from benchmark.scoring.rubric import Rubric, RubricError
from core import private_files
from core.audit import record
from core.exceptions import InvalidRankingPolicy, InvalidRubric, InvalidTestSet

from .hooks import add_board_input_listener as add_board_input_listener  # callers' name
from .hooks import board_input_listeners

# What maintainers may edit on a benchmark (the slug is permanent: URLs and files use it).
EDITABLE_BENCHMARK_FIELDS = frozenset(
    {
        "name",
        "description",
        "about",
        "citation",
        "licence",
        "tie_method",
        "ranking_scope",
        "ranking_decimals",
        "ranking_method",
        "ranking_order",
        "daily_submission_limit",
        "max_upload_mb",
        "max_prediction_chars",
        "bootstrap_replicates",
        "is_public",
        "judge_rubric",
        "judge_settings",
        "judge_auto_start",
        "verification_tolerance",
        "rerun_max_frames",
        "contact_url",
    }
)
# A metric's key, task, direction and kind belong to the scorer; only its presentation is edited.
EDITABLE_METRIC_FIELDS = frozenset({"label", "description", "display_decimals"})
METRIC_PROTOCOL_FIELDS = ("task", "direction", "is_judge_metric", "is_rating", "position")
# Benchmark fields a board's ranks depend on (spec 6).
RANKING_POLICY_FIELDS = frozenset(
    {"tie_method", "ranking_scope", "ranking_decimals", "ranking_method", "ranking_order"}
)
# Other benchmark fields the board shows (issue 15: its facts columns and filters).
BOARD_DISPLAY_FIELDS = frozenset({"model_facts"})
# The definition's settings for hosted evaluation and pairwise ratings (issue 15), stored as
# the submission rules are: at creation, and again with `overwrite`; not edited in the admin.
DEFINITION_SETTINGS = (
    "model_facts",
    "hosted_evaluation",
    "hosted_max_tokens",
    "hosted_requests_per_minute",
    "pairwise_opponents",
    "pairwise_questions",
    "rating_anchor",
    "rating_bootstrap_rounds",
    "rating_seed",
)


def _board_inputs_changed(benchmark_id: int) -> None:
    """Call each board-input listener (hooks.add_board_input_listener), in the change's
    transaction."""
    for listener in board_input_listeners:
        listener(benchmark_id)


# Test sets ------------------------------------------------------------------------------------


def import_testset(
    benchmark: Benchmark,
    source_path: str | Path,
    *,
    actor: Any = None,
    activate: bool = True,
    notes: str = "",
) -> TestSet:
    """Validate a ground-truth file in the benchmark's official format and store it as the
    next version.

    The file is read and checked by the benchmark's plugin (``read_test_set``); if it is malformed,
    ``InvalidTestSet`` carries the loader's message (every bad record and field) and nothing is
    written. Otherwise, in one transaction serialised on the benchmark row:

    - the exact bytes validated are stored in the private store as
      ``testsets/<slug>/v<N>-<sha[:12]>.json`` (``core.private_files``: never half a file, never
      over another), before the row that names it;
    - a ``TestSet`` row is created with version N = the highest so far + 1 and the file's
      checksum and counts, and one ``benchmark.testset.imported`` audit row is written;
    - if ``activate``, ``set_active_testset`` makes it the active version (its own audit row).

    Idempotent: a file whose checksum this benchmark already has returns that test set (made
    active if ``activate`` and it is not) and writes no new version. If the transaction fails,
    the stored file is deleted again (if the store is down by then, it stays behind, named by
    no row: harmless, docs/storage.md). A store that cannot be written raises
    ``StorageUnavailable`` and imports nothing.
    """
    source = Path(source_path)
    try:
        raw = source.read_bytes()
    except OSError as error:
        raise InvalidTestSet(f"Cannot read {source}: {error.strerror}.") from None
    plugin = plugin_for(benchmark)
    try:
        parsed = plugin.read_test_set(raw)
    except GroundTruthError as error:
        raise InvalidTestSet(str(error)) from None
    counts = plugin.test_set_counts(parsed)
    checksum = hashlib.sha256(raw).hexdigest()
    written: str | None = None
    try:
        with transaction.atomic():
            # Serialises imports of one benchmark, so two cannot both take version N.
            locked = Benchmark.objects.select_for_update().get(pk=benchmark.pk)
            existing = TestSet.objects.filter(benchmark=locked, checksum=checksum).first()
            if existing is not None:
                if activate and not existing.is_active:
                    existing = set_active_testset(existing, actor=actor)
                return existing
            highest = locked.test_sets.aggregate(highest=Max("version"))["highest"] or 0
            version = highest + 1
            written = file_name = private_files.save(
                f"testsets/{locked.slug}/v{version}-{checksum[:12]}.json", raw
            )
            test_set = TestSet.objects.create(
                benchmark=locked,
                version=version,
                checksum=checksum,
                file_name=file_name,
                record_count=counts.records,
                qa_type_counts=dict(counts.qa_type_counts),
                task_counts=dict(counts.task_counts),
                dataset_counts=dict(counts.dataset_counts),
                scorer_version=plugin.scorer_version,
                imported_by=actor if getattr(actor, "is_authenticated", False) else None,
                notes=notes,
            )
            record(
                "benchmark.testset.imported",
                actor=actor,
                target=test_set,
                version=version,
                checksum=checksum,
                record_count=test_set.record_count,
                file_name=file_name,
                source=source.name,
                scorer_version=plugin.scorer_version,
                note=notes,
            )
            if activate:
                test_set = set_active_testset(test_set, actor=actor)
    except BaseException:
        if written is not None:
            private_files.delete_unnamed(written)
        raise
    return test_set


def set_active_testset(test_set: TestSet, *, actor: Any, note: str = "") -> TestSet:
    """Make ``test_set`` the version new submissions are scored against.

    The one writer of ``TestSet.is_active``. Deactivates the benchmark's previous active test
    set and writes one ``benchmark.testset.activated`` audit row ``{from, to, note}`` (versions;
    ``from`` is None when none was active). Results already computed keep the test set they
    were computed with. Activating the active test set changes nothing and audits nothing.
    """
    with transaction.atomic():
        Benchmark.objects.select_for_update().get(pk=test_set.benchmark_id)
        previous = TestSet.objects.filter(
            benchmark_id=test_set.benchmark_id, is_active=True
        ).first()
        if previous is not None and previous.pk == test_set.pk:
            test_set.is_active = True
            return test_set
        if previous is not None:
            # Before activating the new one: at most one active row is a constraint.
            previous.is_active = False
            previous.save(update_fields=["is_active"])
        test_set.is_active = True
        test_set.save(update_fields=["is_active"])
        record(
            "benchmark.testset.activated",
            actor=actor,
            target=test_set,
            **{
                "from": previous.version if previous is not None else None,
                "to": test_set.version,
                "note": note,
            },
        )
    return test_set


# Benchmarks and metrics -------------------------------------------------------------------------


def ensure_benchmark(
    definition: BenchmarkDefinition, *, actor: Any = None, overwrite: bool = False
) -> Benchmark:
    """Create the benchmark a definition describes, or bring an existing one in line with it.

    Idempotent. A missing benchmark is created with every field of the definition and its
    metrics (one ``benchmark.benchmark.created`` audit row). For an existing one:

    - metrics missing from the database are added, and each metric's protocol fields (task,
      direction, judge or not, column position) always follow the definition, because the
      scorer produces them;
    - the texts, ranking policy, submission rules and metric labels are maintainers' to edit,
      so they are overwritten from the definition only when ``overwrite`` is true;
    - ``is_public`` is set at creation only;
    - metrics in the database but not in the definition are left alone (results may cite them);
    - the categories (tabs, issue 15) follow the definition: added, their metrics, ranking and
      position aligned always and their texts with ``overwrite``, and removed when the
      definition drops them (`_sync_categories`);
    - the model facts asked for and the hosted-evaluation and rating settings
      (``DEFINITION_SETTINGS``) are stored as the submission rules are.

    Any change writes one ``benchmark.benchmark.updated`` audit row listing what changed; one
    that can move the board (the ranking policy, the metrics, the categories, the facts it
    shows) has it recomputed on commit.
    """
    presentation = {
        "name": definition.name,
        "description": definition.description,
        "about": definition.about,
        "citation": definition.citation,
        "licence": definition.licence,
        "judge_rubric": definition.judge_rubric(),
        "judge_settings": definition.judge_settings(),
        "judge_auto_start": definition.judge_auto_start,
        "verification_tolerance": definition.verification_tolerance,
        "rerun_max_frames": definition.rerun_max_frames,
        "contact_url": definition.contact_url,
        "tie_method": definition.tie_method,
        "ranking_scope": definition.ranking_scope,
        "ranking_decimals": definition.ranking_decimals,
        "ranking_method": definition.ranking_method,
        "ranking_order": list(definition.ranking_order),
        "daily_submission_limit": definition.daily_submission_limit,
        "max_upload_mb": definition.max_upload_mb,
        "max_prediction_chars": definition.max_prediction_chars,
        "bootstrap_replicates": definition.bootstrap_replicates,
        **{name: _stored(getattr(definition, name)) for name in DEFINITION_SETTINGS},
    }
    with transaction.atomic():
        benchmark, created = Benchmark.objects.select_for_update().get_or_create(
            slug=definition.slug,
            defaults={
                **presentation,
                "is_public": definition.is_public,
                "plugin": definition.plugin,
            },
        )
        changed_fields = []
        if not created and overwrite:
            changed_fields = _assign_changes(benchmark, presentation)
            if changed_fields:
                benchmark.save(update_fields=[*changed_fields, "updated_at"])
        # Protocol, like a metric's task: the plugin follows the definition always.
        if not created and benchmark.plugin != definition.plugin:
            benchmark.plugin = definition.plugin
            benchmark.save(update_fields=["plugin", "updated_at"])
            changed_fields = [*changed_fields, "plugin"]
        added, updated = _sync_metrics(
            benchmark, definition.metrics, overwrite=overwrite or created
        )
        categories = _sync_categories(
            benchmark, definition.categories, overwrite=overwrite or created
        )
        if created:
            record(
                "benchmark.benchmark.created",
                actor=actor,
                target=benchmark,
                metrics=[metric.key for metric in definition.metrics],
                # Only for a benchmark with categories: the others' rows stay as they were.
                **(
                    {"categories": [category.key for category in definition.categories]}
                    if definition.categories
                    else {}
                ),
            )
        elif changed_fields or added or updated or any(categories.values()):
            record(
                "benchmark.benchmark.updated",
                actor=actor,
                target=benchmark,
                fields=changed_fields,
                metrics_added=added,
                metrics_updated=updated,
                # Only when they changed: the rows of benchmarks without categories stay as
                # they were.
                **{f"categories_{name}": keys for name, keys in categories.items() if keys},
            )
            board_fields = RANKING_POLICY_FIELDS | BOARD_DISPLAY_FIELDS
            if (
                board_fields.intersection(changed_fields)
                or added
                or updated
                or any(categories.values())
            ):
                _board_inputs_changed(benchmark.pk)
    return benchmark


def _stored(value: Any) -> Any:
    """A definition's value as its JSON field stores it (a tuple is a list there)."""
    return list(value) if isinstance(value, tuple) else value


def _sync_categories(
    benchmark: Benchmark, definitions: tuple[CategoryDefinition, ...], *, overwrite: bool
) -> dict[str, Any]:
    """Make the benchmark's categories the definition's (issue 15): add the missing ones,
    align the protocol (metrics, ranking, position) of the others always and their texts
    when `overwrite`, and remove those the definition no longer has (they hold no results:
    ratings are keyed by the category's key). Returns {"added": [keys], "updated": {key:
    [fields]}, "removed": [keys]}."""
    existing = {category.key: category for category in benchmark.categories.all()}
    added: list[str] = []
    updated: dict[str, list[str]] = {}
    for position, definition in enumerate(definitions, start=1):
        protocol = {
            "ranking": definition.ranking,
            "metric_keys": list(definition.metrics),
            "position": position,
        }
        presentation = {
            "label": definition.label,
            "description": definition.description,
            "judge_note": definition.judge_note,
        }
        category = existing.get(definition.key)
        if category is None:
            Category.objects.create(
                benchmark=benchmark, key=definition.key, **protocol, **presentation
            )
            added.append(definition.key)
            continue
        changed = _assign_changes(category, protocol)
        if overwrite:
            changed += _assign_changes(category, presentation)
        if changed:
            category.save(update_fields=changed)
            updated[definition.key] = changed
    removed = sorted(set(existing) - {definition.key for definition in definitions})
    if removed:
        benchmark.categories.filter(key__in=removed).delete()
    return {"added": added, "updated": updated, "removed": removed}


def ensure_plugin_benchmark(key: str, *, actor: Any = None, overwrite: bool = False) -> Benchmark:
    """``ensure_benchmark`` for the definition the plugin registered under ``key`` carries."""
    return ensure_benchmark(get_plugin(key).definition, actor=actor, overwrite=overwrite)


def _assign_changes(instance: Benchmark | Metric | Category, values: dict[str, Any]) -> list[str]:
    """Set the values that differ on ``instance``; return the names of the fields set."""
    changed = []
    for name, value in values.items():
        if getattr(instance, name) != value:
            setattr(instance, name, value)
            changed.append(name)
    return changed


def _save_audited_edit(
    instance: Benchmark | Metric, changes: dict[str, Any], *, action: str, actor: Any, note: str
) -> list[str]:
    """Assign the differing values, save just those fields and write one audit row
    ``{changes: {field: {from, to}}, note}``. Nothing is saved or audited when nothing
    changes. Returns the changed field names; the caller owns the transaction."""
    before = {name: getattr(instance, name) for name in changes}
    changed = _assign_changes(instance, changes)
    if not changed:
        return changed
    auto_now = [f.name for f in instance._meta.concrete_fields if getattr(f, "auto_now", False)]
    instance.save(update_fields=[*changed, *auto_now])
    record(
        action,
        actor=actor,
        target=instance,
        changes={name: {"from": before[name], "to": changes[name]} for name in changed},
        note=note,
    )
    return changed


def _sync_metrics(
    benchmark: Benchmark, definitions: tuple[MetricDefinition, ...], *, overwrite: bool
) -> tuple[list[str], dict[str, list[str]]]:
    """Add missing metrics and align existing ones; return (added keys, {key: changed fields})."""
    existing = {metric.key: metric for metric in benchmark.metrics.all()}
    added: list[str] = []
    updated: dict[str, list[str]] = {}
    for position, definition in enumerate(definitions, start=1):
        protocol = {
            "task": definition.task,
            "direction": definition.direction,
            "is_judge_metric": definition.is_judge_metric,
            "is_rating": definition.is_rating,
            "position": position,
        }
        presentation = {
            "label": definition.label,
            "description": definition.description,
            "display_decimals": definition.display_decimals,
        }
        metric = existing.get(definition.key)
        if metric is None:
            Metric.objects.create(
                benchmark=benchmark, key=definition.key, **protocol, **presentation
            )
            added.append(definition.key)
            continue
        changed = _assign_changes(metric, protocol)
        if overwrite:
            changed += _assign_changes(metric, presentation)
        if changed:
            metric.save(update_fields=changed)
            updated[definition.key] = changed
    return added, updated


def update_benchmark(
    benchmark: Benchmark, *, actor: Any, note: str = "", **changes: Any
) -> Benchmark:
    """Edit a benchmark's texts, ranking policy or submission rules (the admin calls this).

    Only ``EDITABLE_BENCHMARK_FIELDS`` may change (anything else is a programming error,
    ``ValueError``). Saves the changed fields and writes one ``benchmark.benchmark.updated``
    audit row ``{changes: {field: {from, to}}, note}``; changes nothing and audits nothing when
    every value is already current. A changed ranking policy has the board recomputed on commit
    (through the board-input listeners). A ranking method and order that cannot rank the
    board (lexicographic without an order, a key that is not one of the benchmark's metrics)
    raise ``InvalidRankingPolicy`` and nothing is saved.
    """
    unknown = set(changes) - EDITABLE_BENCHMARK_FIELDS
    if unknown:
        raise ValueError(f"not editable on a benchmark: {', '.join(sorted(unknown))}")
    if {"judge_rubric", "judge_settings"} & changes.keys():
        _check_rubric(
            changes.get("judge_rubric", benchmark.judge_rubric),
            changes.get("judge_settings", benchmark.judge_settings),
            benchmark.judge_task_labels,
        )
    if {"ranking_method", "ranking_order"} & changes.keys():
        problem = ranking_order_problem(
            changes.get("ranking_method", benchmark.ranking_method),
            changes.get("ranking_order", benchmark.ranking_order),
            benchmark.metric_keys(),
        )
        if problem:
            raise InvalidRankingPolicy(problem)
    with transaction.atomic():
        changed = _save_audited_edit(
            benchmark, changes, action="benchmark.benchmark.updated", actor=actor, note=note
        )
        if RANKING_POLICY_FIELDS.intersection(changed):
            _board_inputs_changed(benchmark.pk)
    return benchmark


def _check_rubric(template: str, settings: Any, labels: tuple[str, ...] = ()) -> None:
    """Refuse a rubric edit that would leave the judge unable to work (`InvalidRubric`):
    `labels` are the tasks the benchmark's judge needs a label for."""
    if not template.strip():
        return  # no judge metrics
    try:
        Rubric.from_dict(
            settings if isinstance(settings, dict) else {},
            template=template,
            required_labels=labels,
        )
    except RubricError as error:
        raise InvalidRubric(f"The judge rubric cannot be used: {error}.") from None


def update_metric(metric: Metric, *, actor: Any, note: str = "", **changes: Any) -> Metric:
    """Edit a metric's presentation: label, description, display precision.

    Its key, task, direction, kind and position belong to the scorer and the definition
    (``ValueError`` if asked). One ``benchmark.metric.updated`` audit row
    ``{changes: {field: {from, to}}, note}``; nothing when nothing changes. The board shows
    labels and precision, so the board-input listeners run on commit.
    """
    unknown = set(changes) - EDITABLE_METRIC_FIELDS
    if unknown:
        raise ValueError(f"not editable on a metric: {', '.join(sorted(unknown))}")
    with transaction.atomic():
        changed = _save_audited_edit(
            metric, changes, action="benchmark.metric.updated", actor=actor, note=note
        )
        if changed:
            _board_inputs_changed(metric.benchmark_id)
    return metric
