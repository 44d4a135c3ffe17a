"""Benchmark plugins (issue 14): what a benchmark knows that the platform does not.

A benchmark is data (its `Benchmark` row, metrics, test sets) plus a plugin: one object that
reads and checks its test-set files, checks a predictions file against a test set with row-level
problems, scores it into the platform's result shape (metrics by key, per-group breakdowns, a
format report) with the per-sample contributions the intervals need, says which extra
choices a submission declares (MedSG-Bench's box convention), and how its model is re-run for
verification (`Rerun`: the media and question of each item, the answers as a file).
`Benchmark.plugin` names the plugin by its key.

Plugins are found through Python entry points in the group `podium.benchmarks`, as pytest finds
its plugins: a benchmark can ship as its own package declaring

    [project.entry-points."podium.benchmarks"]
    my-benchmark = "my_package.plugin:plugin"

and the built-in ones (pyproject.toml) register the same way. A test can add one for its own
duration with `registered(plugin)`. docs/adding-a-benchmark.md walks through a new one.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from benchmark.definitions import BenchmarkDefinition
    from benchmark.media import Folder

ENTRY_POINT_GROUP = "podium.benchmarks"
# The plugin of a benchmark created before plugins existed: MedVidBench was the only one.
DEFAULT_PLUGIN = "medvidbench"


class UnknownPlugin(LookupError):
    """No plugin is registered under a benchmark's key (a package not installed)."""


@dataclass(frozen=True)
class SubmissionOption:
    """A choice a submission declares beside its file, on the form and in the API (e.g.
    MedSG-Bench's `box_format`). Stored on the submission, passed to `check_predictions` and
    `score` as `options[key]`."""

    key: str
    label: str
    help_text: str
    choices: tuple[tuple[str, str], ...]  # (value, label)
    required: bool = True
    # "choice": pick one of `choices`; "declaration": a box the submitter must tick, whose one
    # choice is the stored value and its label the statement (MedSG-Bench's zero-shot protocol).
    kind: str = "choice"

    def __post_init__(self) -> None:
        if not self.key.isidentifier():
            raise ValueError(f"an option key is an identifier, not {self.key!r}")
        if not self.choices:
            raise ValueError(f"option {self.key!r} offers no choice")
        if self.kind not in ("choice", "declaration"):
            raise ValueError(f"option {self.key!r}: kind is 'choice' or 'declaration'")
        if self.kind == "declaration" and len(self.choices) != 1:
            raise ValueError(f"declaration {self.key!r} has exactly one choice: its statement")

    @property
    def statement(self) -> str:
        """A declaration's text."""
        return self.choices[0][1]

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(value for value, _ in self.choices)


@dataclass(frozen=True)
class TestSetCounts:
    """What the platform stores about a test-set version beside its file."""

    __test__ = False  # not a pytest test class, despite the name

    records: int
    task_counts: Mapping[str, int]
    dataset_counts: Mapping[str, int] = field(default_factory=dict)
    qa_type_counts: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class PublishedRow:
    """A result published elsewhere (a paper's table), imported onto the board as verified,
    dated as published there (`submissions.services.import_published_result`)."""

    model_name: str
    values: Mapping[str, float | None]
    published_on: date
    is_baseline: bool = True
    model_url: str = ""
    note: str = "published result, demo data"


@dataclass(frozen=True)
class DemoEntry:
    """One example submission of the demo: a predictions file and what the form would say."""

    model_name: str
    institution: str
    predictions: Path
    options: Mapping[str, str] = field(default_factory=dict)
    publish: bool = True
    team_name: str = ""
    # The model facts a submitter would give (`benchmark.facts`), where the benchmark asks.
    facts: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DemoFiles:
    """What a plugin's `write_demo` wrote: a synthetic test set and example submissions."""

    test_set: Path
    entries: tuple[DemoEntry, ...]
    # Further predictions files the stand-in model plays back (a file no entry has, for a
    # visitor to upload and a maintainer to re-run); the entries' files are played back too.
    playback: tuple[Path, ...] = ()
    # Demo models evaluated through the hosted evaluation queue instead of uploaded (issue 15,
    # docs/hosted.md): `load_demo` submits each as a request for the stand-in model that
    # plays back its file, so a fresh machine shows the queue filling and finishing.
    hosted: tuple[DemoEntry, ...] = ()


@dataclass(frozen=True)
class FileGuide:
    """The "Your file" section of Submit and About, as plain text a template escapes: what a
    row holds, how rows are matched to the test set, and an optional table (a caption, the
    column headings, rows of cells)."""

    paragraphs: tuple[str, ...]
    matching: str
    template_note: str
    # The matching rule in one sentence, beside the upload field ("Rows are matched to the
    # test set by position: keep its order."); the full rule is `matching`.
    matching_short: str = ""
    table_caption: str = ""
    table_headings: tuple[str, ...] = ()
    table_rows: tuple[tuple[str, ...], ...] = ()
    # About's metric table: which rows feed a metric, by the metric's `task` (MedVidBench's
    # qa_type strings; MedSG-Bench's task keys), under `sources_heading`.
    sources_heading: str = ""
    sources: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Wording:
    """How the pages name a benchmark's parts (`wording_for`): plain words a template puts
    in its sentences, so no page says "samples" and "videos" of a benchmark of items."""

    item: str  # one row of the test set: "sample" (MedVidBench), "item" (MedSG-Bench)
    breakdown: str  # one breakdown group: "dataset", "task"
    # What the bootstrap draws whole: "video" (a video's samples together), or "" when it
    # draws the items one by one.
    cluster: str

    @property
    def items(self) -> str:
        return f"{self.item}s"

    @property
    def resampled(self) -> str:
        """What the 95% intervals resample, for "the test set's ... resampled N times"."""
        return f"{self.cluster}s" if self.cluster else self.items


def wording_for(plugin: Any) -> Wording:
    """The plugin's words. `item_label` and `cluster_label` are optional attributes of a
    plugin (docs/adding-a-benchmark.md); without them a row is a "sample", resampled one by
    one (MedVidBench says "video": its samples are drawn a video at a time)."""
    return Wording(
        item=getattr(plugin, "item_label", "sample"),
        breakdown=plugin.breakdown_label,
        cluster=getattr(plugin, "cluster_label", "") or "",
    )


@runtime_checkable
class ScoredResult(Protocol):
    """A scored file as the platform stores it: `metrics` by metric key (None: no value, a
    pending judge metric), `to_dict()` the JSON kept on the run (the status and entry pages
    read its `per_dataset`, `counts`, `parsed` and `unparsed_examples`), `scorer_version`."""

    metrics: Mapping[str, float | None]
    scorer_version: str

    def to_dict(self) -> dict[str, Any]: ...


@runtime_checkable
class Contributions(Protocol):
    """What a run's metrics aggregate, per sample (private; docs/statistics.md): each metric
    (or those in `keys`) again under a (B, n_samples) batch of integer weights, and the bytes
    stored for it. A plugin with a judge step adds `with_metrics(more)` (the judge metrics'
    added) and `only(keys)`."""

    def replicate_values(
        self, weights: np.ndarray, keys: Sequence[str] | None = None
    ) -> dict[str, np.ndarray]: ...

    def to_bytes(self) -> bytes: ...


class Judge(Protocol):
    """A plugin's LLM judge step (`plugin.judge`; None without one): the items to judge, the
    aggregation of their verdicts into the judge metrics, what each metric aggregated, and the
    stored result with the judge metrics in or out. The platform sends the prompts, caches
    the verdicts and publishes (`judging`, `submissions.judge_step`)."""

    metrics: tuple[str, ...]
    # The tasks the rubric must label (`benchmark.scoring.rubric.Rubric.required_labels`).
    task_labels: tuple[str, ...]

    def items(self, test_set: Any, predictions: Any) -> Sequence[Any]:
        """The items, each with `key`, `metric`, `dataset`, `sample`, `threshold` and
        `prompt(rubric)`."""
        ...

    def outcome(self, test_set: Any, items: Sequence[Any], verdicts: Any, rubric: Any) -> Any: ...

    def contributions(
        self, test_set: Any, items: Sequence[Any], verdicts: Any, rubric: Any
    ) -> Mapping[str, Any]: ...

    def with_outcome(self, result: Mapping[str, Any], outcome: Any) -> dict[str, Any]: ...

    def without_outcome(self, result: Mapping[str, Any]) -> dict[str, Any]: ...


@runtime_checkable
class Rerun(Protocol):
    """What the verification re-run needs of a benchmark (docs/verification.md): which media
    files each item sends and whether they are on disk, each item's question as one user
    message (OpenAI's vision format, `benchmark.media`), and the model's answers as a
    predictions file in the benchmark's own format, which the platform then checks and scores
    with `check_predictions` and `score` like any upload.

    `root` is the benchmark's media folder on the server (`verifying.config.media_root`: a
    `benchmark.media.MediaFolder` of the private store, or a local `Path`; read it with
    `benchmark.media.missing_files` and `file_urls`, which take either) and
    `max_media` the benchmark's `rerun_max_frames` copied onto the job; `indexes` are test-set
    positions (None: every item).
    """

    # Where the media are under the private store's frames/: in a folder of their own named by the
    # benchmark's slug (True), or at the top (MedVidBench's frames, placed there before there
    # were plugins).
    media_in_slug_folder: bool
    # What one media file is called in messages ("frame", "image").
    media_label: str

    def media_paths(
        self, test_set: Any, max_media: int, indexes: Iterable[int] | None = None
    ) -> list[str]:
        """The media paths (relative to `root`) a re-run of `indexes` sends, in test-set
        order, each once."""
        ...

    def missing_media(
        self, test_set: Any, root: Folder, max_media: int, indexes: Iterable[int] | None = None
    ) -> list[str]:
        """The media paths a re-run of `indexes` would send that are not files under `root`
        (a path leading outside it counts as missing), in test-set order."""
        ...

    def questions(
        self, test_set: Any, root: Folder, max_media: int, indexes: Iterable[int]
    ) -> Iterator[tuple[int, Callable[[], list[dict[str, Any]]]]]:
        """(index, build) for each of `indexes`, in order: `build()` reads the item's media
        and returns one user message's content (`OSError` when a file cannot be read); it is
        called only when the question is about to be sent."""
        ...

    def predictions_file(
        self, test_set: Any, answers: Mapping[int, str], options: Mapping[str, str]
    ) -> bytes:
        """The model's answers (index -> text; an item without one answered "") as a
        predictions file in the benchmark's format, every row in test-set order."""
        ...

    def write_demo_media(
        self, files: DemoFiles, test_set: Any, root: Path, max_media: int
    ) -> tuple[int, str]:
        """Put the media a re-run of the demo test set sends under `root` (a development
        machine's demo): (files written, a line for the log). Idempotent."""
        ...


@runtime_checkable
class Pairwise(Protocol):
    """What pairwise-judged categories need of a benchmark (issue 15, docs/ratings.md): the
    questions of a rating category, a model's answers to them read from its checked
    predictions, the judge's prompt for one battle and how its reply is read. The platform
    schedules the battles, sends each prompt twice with the answers' positions swapped, and
    calls a battle whose preferred answer changes with the positions a tie."""

    def questions(self, test_set: Any, category: str) -> Sequence[tuple[str, str]]:
        """(question key, question text) of the category's items, in test-set order. Public:
        battles are exported with their question keys."""
        ...

    def references(self, test_set: Any, category: str) -> Mapping[str, str]:
        """question key -> the reference answer the judge is shown ({} for none). Private like
        all ground truth: it goes into the judge's prompt and nowhere else."""
        ...

    def answers(self, test_set: Any, predictions: Any, category: str) -> Mapping[str, str]:
        """question key -> the model's answer, from `check_predictions`' result."""
        ...

    def battle_prompt(self, question: str, first: str, second: str, *, reference: str = "") -> str:
        """The judge's prompt showing `first` as answer 1 and `second` as answer 2, with the
        question's reference answer when it has one."""
        ...

    def read_verdict(self, text: str) -> str | None:
        """ "first", "second" or "tie" from the judge's reply; None when it names none."""
        ...


@runtime_checkable
class BenchmarkPlugin(Protocol):
    """The protocol every benchmark plugin implements (docs/adding-a-benchmark.md).

    Input problems are `benchmark.scoring.errors.GroundTruthError` / `PredictionsError`, each
    naming the row and the field; the platform shows them as they are and changes nothing.
    """

    key: str
    definition: BenchmarkDefinition
    scorer_version: str
    submission_options: tuple[SubmissionOption, ...]
    # What one breakdown group is called on the pages: "dataset" for MedVidBench, "task" here.
    breakdown_label: str
    # Whether a scored run waits for the LLM judge (MedVidBench's captions); without one a run
    # is complete once scored.
    judge_step: bool
    judge: Judge | None
    # The verification re-run (`Rerun`); None for a benchmark whose model cannot be re-run
    # (verifying refuses to start one).
    rerun: Rerun | None
    # Pairwise-judged categories (`Pairwise`); None for a benchmark without rating categories.
    pairwise: Pairwise | None

    def read_test_set(self, data: bytes) -> Any:
        """The parsed test set, or GroundTruthError."""
        ...

    def test_set_counts(self, test_set: Any) -> TestSetCounts: ...

    def check_predictions(
        self,
        data: bytes,
        test_set: Any,
        *,
        options: Mapping[str, str],
        max_prediction_chars: int | None,
    ) -> Any:
        """The predictions in test-set order, or PredictionsError with every problem."""
        ...

    def score(
        self, test_set: Any, predictions: Any, *, options: Mapping[str, str]
    ) -> tuple[ScoredResult, Contributions]: ...

    def replicate_clusters(self, test_set: Any) -> Sequence[Any]:
        """One cluster label per sample: the bootstrap draws whole clusters (a video's
        samples together for MedVidBench; each item alone for MedSG-Bench)."""
        ...

    def contributions_from_bytes(self, data: bytes) -> Contributions: ...

    def cli_report(self, result: ScoredResult) -> dict[str, Any]:
        """What `manage.py score --benchmark <key> --format json` prints."""
        ...

    def row_label(self, test_set: Any, row: int) -> str:
        """How a problem's row is named beside its number ("id 'v3_0011'", "task 'patch'")."""
        ...

    def template_rows(self, test_set: Any) -> Iterator[dict[str, Any]]:
        """Every row of a file for `test_set`, in order, with an empty prediction: the
        downloadable template (what the checker wants in every field but the answers)."""
        ...

    def file_guide(self, counts: Mapping[str, Any]) -> FileGuide:
        """The guide, from what is stored about the active test set (so it needs no file):
        `counts` holds `records`, `task_counts`, `qa_type_counts` and `metrics_by_task` (the
        benchmark's metric keys by their task)."""
        ...

    def write_demo(self, folder: Path, *, force: bool = False) -> DemoFiles | None:
        """A synthetic test set and example predictions under `folder` (a development
        machine's demo), the same bytes on every call; files already there are kept unless
        `force`. None when the plugin has no demo."""
        ...

    def published_rows(self) -> tuple[PublishedRow, ...]:
        """Published results to import as the board's baselines (may be empty)."""
        ...


# -- the registry -----------------------------------------------------------------------------

_lock = threading.Lock()
_found: dict[str, BenchmarkPlugin] | None = None
_added: dict[str, BenchmarkPlugin] = {}


def _discover() -> dict[str, BenchmarkPlugin]:
    plugins = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        plugin = point.load()
        if getattr(plugin, "key", None) != point.name:
            raise UnknownPlugin(
                f"the entry point {point.name!r} ({point.value}) loads a plugin whose key is "
                f"{getattr(plugin, 'key', None)!r}; the two must be equal"
            )
        plugins[point.name] = plugin
    return plugins


def plugins() -> dict[str, BenchmarkPlugin]:
    """Every registered plugin by key: the entry points (read once per process) and those a
    test added."""
    global _found
    with _lock:
        if _found is None:
            _found = _discover()
        return {**_found, **_added}


def get_plugin(key: str) -> BenchmarkPlugin:
    """The plugin registered under `key`, or UnknownPlugin saying what is registered."""
    found = plugins()
    if key in found:
        return found[key]
    known = ", ".join(sorted(found)) or "none"
    hint = (
        " Podium's own plugins register through its pyproject.toml: `make` installs it "
        "(pip install --no-deps -e .)."
        if not found
        else ""
    )
    raise UnknownPlugin(f"No benchmark plugin {key!r} is installed (installed: {known}).{hint}")


def plugin_for(benchmark: Any) -> BenchmarkPlugin:
    """The plugin of a `Benchmark` row."""
    return get_plugin(benchmark.plugin or DEFAULT_PLUGIN)


@contextlib.contextmanager
def registered(plugin: BenchmarkPlugin) -> Iterator[BenchmarkPlugin]:
    """`plugin` registered for the block's duration, as an installed one would be (tests)."""
    with _lock:
        if plugin.key in _added:
            raise ValueError(f"a plugin {plugin.key!r} is registered already")
        _added[plugin.key] = plugin
    try:
        yield plugin
    finally:
        with _lock:
            _added.pop(plugin.key, None)
