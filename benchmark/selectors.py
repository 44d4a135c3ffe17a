"""Reads for benchmarks and test sets."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from django.db.models import Exists, OuterRef, QuerySet

from accounts.roles import can_view_hidden_benchmarks
from benchmark.models import Benchmark, Category, TestSet
from benchmark.plugins import plugin_for
from benchmark.scoring.errors import GroundTruthError
from core import private_files
from core.private_files import PrivateFileCorrupt

# Parsed ground truths kept per process. MedVidBench's 6,245 records take ~0.3 s to parse; a
# process rarely needs more than the active version and the one before it.
PARSED_TESTSET_CACHE_SIZE = 4


class TestSetFileError(RuntimeError):
    """A stored test set's file is missing, altered or no longer readable by the scorer.

    Not a ``DomainError``: no user request can fix it. It means the private folder was touched
    behind the platform's back (or lost), and an operator must restore the file.
    """

    __test__ = False  # not a pytest test class, despite the name


def public_benchmarks() -> QuerySet[Benchmark]:
    """Benchmarks listed to everyone, by name."""
    return Benchmark.objects.filter(is_public=True).order_by("name")


def benchmarks_for(viewer: Any) -> QuerySet[Benchmark]:
    """The benchmarks ``viewer`` may open, by name: the public ones, and hidden ones too for
    those who may see hidden benchmarks (``accounts.roles.can_view_hidden_benchmarks``:
    maintainers and superusers, not staff as such). ``viewer=None`` stands for the system
    (commands, tasks), which sees every benchmark; a view passes ``request.user``."""
    benchmarks = Benchmark.objects.order_by("name")
    if viewer is not None and not can_view_hidden_benchmarks(viewer):
        benchmarks = benchmarks.filter(is_public=True)
    return benchmarks


def benchmark_by_slug(slug: str, *, viewer: Any) -> Benchmark:
    """The benchmark with this slug, if ``viewer`` may see it (see ``benchmarks_for``: the list
    and a single benchmark follow the same rule). Raises ``Benchmark.DoesNotExist`` when there is
    none to show. It carries ``has_categories`` (issue 15), read in the same query, so a page of
    a benchmark without categories spends no query on them (``benchmark_categories``)."""
    has_categories = Exists(Category.objects.filter(benchmark=OuterRef("pk")))
    return benchmarks_for(viewer).annotate(has_categories=has_categories).get(slug=slug)


def benchmark_categories(benchmark: Benchmark) -> list[Category]:
    """The benchmark's categories (tabs) in order; no query when it was read by
    ``benchmark_by_slug`` and has none."""
    if getattr(benchmark, "has_categories", True) is False:
        return []
    return list(benchmark.categories.all())


def active_testset(benchmark: Benchmark) -> TestSet | None:
    """The test set new submissions to ``benchmark`` are scored against, if one is active."""
    return TestSet.objects.filter(benchmark=benchmark, is_active=True).first()


def load_scoring_testset(test_set: TestSet) -> Any:
    """The parsed ground truth of a stored test set, ready for its benchmark plugin's
    ``check_predictions`` and ``score`` (benchmark/plugins.py).

    Reads the private file through this machine's verified copy (``core.private_files.
    verified_copy``: with S3, downloaded once per machine and checked against the checksum
    recorded at import), then parses it with the benchmark's plugin; the parsed object is
    cached per process (keyed by checksum, file and benchmark), so the check and the parse
    happen once per process and version. Raises ``TestSetFileError`` when the file is missing
    or its checksum differs, or the plugin now rejects it; ``StorageUnavailable`` when the
    store cannot be reached.
    """
    return _parse_stored_file(test_set.checksum, test_set.file_name, test_set.benchmark_id)


@lru_cache(maxsize=PARSED_TESTSET_CACHE_SIZE)
def _parse_stored_file(checksum: str, name: str, benchmark_id: int) -> Any:
    # lru_cache does not keep exceptions: a file restored after a failure is read again.
    try:
        raw = private_files.read_verified(name, checksum)
    except FileNotFoundError:
        raise TestSetFileError(
            f"Test set file {name} cannot be read: it is not in the private store."
        ) from None
    except PrivateFileCorrupt as error:
        raise TestSetFileError(
            f"Test set file {name} was altered: its sha256 is {error.actual}, "
            f"the imported file's was {checksum}."
        ) from None
    plugin = plugin_for(Benchmark.objects.only("plugin").get(pk=benchmark_id))
    try:
        return plugin.read_test_set(raw)
    except GroundTruthError as error:
        raise TestSetFileError(
            f"Test set file {name} no longer loads with scorer {plugin.scorer_version}:\n{error}"
        ) from None


def clear_parsed_testsets() -> None:
    """Forget every cached parse (for tests, and after restoring a file by hand)."""
    _parse_stored_file.cache_clear()


_BENCHMARK_PATH = re.compile(r"^/b/(?P<slug>[-a-zA-Z0-9_]+)/")


def navigation_benchmark(next_path: str, *, viewer: Any) -> Benchmark | None:
    """The benchmark whose tabs a page outside any benchmark (sign-in, sign-up) shows: the one
    ``next_path`` leads back into (``/b/<slug>/...``) when ``viewer`` may see it, else the only
    public benchmark, else none (the home page lists several)."""
    match = _BENCHMARK_PATH.match(next_path or "")
    found = match and benchmarks_for(viewer).filter(slug=match["slug"]).first()
    if found:
        return found
    only = list(public_benchmarks()[:2])
    return only[0] if len(only) == 1 else None
