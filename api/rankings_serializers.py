"""The rankings' serializers: the query parameters (validated here) and the response's shape,
for the OpenAPI schema. The rows themselves are built as plain dicts by `api.rankings` (DRF
serializers take ~50 ms for 1,000 nested rows); a test holds the two together."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from benchmark.facts import FACTS, MAX_PARAMETERS_BILLIONS
from submissions.board_json import (
    INTERVAL_NOTES,
    NOTE_IMPORTED,
    NOTE_JUDGE_PENDING,
    NOTE_NOT_COMPUTED,
)
from submissions.enums import BoardKind
from submissions.selectors import BOARD_TAGS, MAX_SEARCH_CHARS

ALL_BOARDS = "all"
DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000


# --- serializers: query parameters ----------------------------------------------------------------


class FactChoiceField(serializers.ChoiceField):
    """A model-fact filter (issue 15, `benchmark.facts`): rows whose model has this value; a
    value the fact does not take is 400 with the values it takes."""

    def __init__(self, key: str, **kwargs: object) -> None:
        definition = FACTS[key]
        super().__init__(
            choices=[*definition.values, ""],
            default="",
            help_text=f"Only rows whose model's {definition.label.lower()} is this: "
            f"{definition.allowed}. For a benchmark that asks for model facts.",
            error_messages={
                "invalid_choice": f"{definition.label}: expected {definition.allowed}, got "
                '"{input}".'
            },
            **kwargs,
        )


@extend_schema_field(OpenApiTypes.DATETIME)
class AsOfField(serializers.CharField):
    """`?as_of=`: an ISO 8601 date-time in the schema; a plain date (its day's end) is taken
    too (`submissions.snapshot_board.parse_as_of` reads both)."""


class RankingsQuerySerializer(serializers.Serializer):
    board = serializers.ChoiceField(
        choices=[*BoardKind.values, ALL_BOARDS],
        default=BoardKind.OFFICIAL.value,
        help_text="official (verified entries), community (the other published ones) or all.",
    )
    # A column key is taken as given: "\r" is no column of the benchmark (404), not a blank.
    sort = serializers.CharField(
        default="rank",
        trim_whitespace=False,
        help_text=(
            "rank, model, team, date (the board's date column) or a metric key of the "
            "benchmark (another is 404, naming its columns). Sorting "
            "reorders the rows only; every row keeps its rank. Equal values stay in rank "
            "order and empty values go last in either direction."
        ),
    )
    direction = serializers.ChoiceField(
        choices=["asc", "desc"],
        required=False,
        help_text="Default: best first for a metric, newest first for the date, else asc.",
    )
    q = serializers.CharField(
        default="",
        allow_blank=True,
        max_length=MAX_SEARCH_CHARS,
        help_text=(
            "Only rows whose model name or team contains this text (case-insensitive), as "
            "the board page's search."
        ),
    )
    tag = serializers.ChoiceField(
        choices=[*BOARD_TAGS, ""],
        default="",
        help_text=(
            "Only rows with this tag: verified, baseline, imported, paper (with a paper "
            "link) or code (with a code link)."
        ),
    )
    category = serializers.CharField(
        default="",
        allow_blank=True,
        max_length=50,
        help_text=(
            "A category's key (a tab of the board, issue 15): its rows ordered by their rank in "
            "it (`category_rank`; `sort=rank` is that order), `metrics` its columns only. "
            "Empty: the overview, every metric. An unknown key is 404, naming the benchmark's."
        ),
    )
    type = FactChoiceField("type")
    precision = FactChoiceField("precision")
    domain_specific = FactChoiceField("domain_specific")
    size_min = serializers.FloatField(
        required=False,
        min_value=0,
        max_value=MAX_PARAMETERS_BILLIONS,
        help_text=(
            "Only rows whose model has at least this many billions of parameters, as its "
            "submitter gave them (a row without a size is left out of any range). Only where "
            "the benchmark asks for the parameter count (`model_facts`); elsewhere 404."
        ),
    )
    size_max = serializers.FloatField(
        required=False,
        min_value=0,
        max_value=MAX_PARAMETERS_BILLIONS,
        help_text="Only rows whose model has at most this many billions of parameters.",
    )
    as_of = AsOfField(
        default="",
        allow_blank=True,
        max_length=40,
        help_text=(
            "An ISO 8601 date (its end, UTC) or date and time: the rows of the latest board "
            "snapshot taken at or before that moment (issue 33), with every other parameter "
            "applied to them; the JSON names the snapshot in `as_of`. Before the first "
            "snapshot: 404, naming its date."
        ),
    )
    page = serializers.IntegerField(default=1, min_value=1, help_text="JSON only.")
    page_size = serializers.IntegerField(
        default=DEFAULT_PAGE_SIZE,
        min_value=1,
        max_value=MAX_PAGE_SIZE,
        help_text="JSON only; the CSV and the .json download hold every row.",
    )


# The model facts the rankings filter on (`?type=`, `?precision=`, `?domain_specific=`).
FACT_FILTERS = tuple(definition.key for definition in FACTS.values() if definition.filterable)
# The parameter count's range (issue 32), in billions.
SIZE_FILTERS = ("size_min", "size_max")
# The parameters that shape each body, in the order of the canonical links and ETags.
JSON_QUERY = (
    "board", "sort", "direction", "q", "tag", "category", *FACT_FILTERS, *SIZE_FILTERS,
    "as_of", "page", "page_size",
)  # fmt: skip
CSV_QUERY = (
    "board", "sort", "direction", "q", "tag", "category", *FACT_FILTERS, *SIZE_FILTERS, "as_of",
)  # fmt: skip


# --- serializers: responses (the rankings rows are built as dicts, see the module docstring) ------


class RankingMetricSerializer(serializers.Serializer):
    value = serializers.FloatField(allow_null=True, help_text="As stored, full precision")
    ranked_value = serializers.FloatField(
        allow_null=True, help_text="The value the ranking compared (rounded by the policy)"
    )
    rank = serializers.IntegerField(
        allow_null=True, help_text="Rank on this metric (missing values share the last)"
    )
    interval = serializers.ListField(
        child=serializers.FloatField(),
        min_length=2,
        max_length=2,
        allow_null=True,
        help_text="The 95% clustered-bootstrap interval [low, high] of `value`; null when "
        "there is none (see the row's `interval_note`, docs/statistics.md). For a rating, "
        "its bootstrap interval over battles",
    )
    battles = serializers.IntegerField(
        required=False,
        allow_null=True,
        help_text="Rating metrics only (issue 15): the battles the rating is fitted on; null "
        "while the rating is pending (its battles not run yet: `value` is null too)",
    )


class TiebreakersSerializer(serializers.Serializer):
    wins = serializers.IntegerField(help_text="Metrics won (rank 1 with a value)")
    rank_sum = serializers.IntegerField(allow_null=True, help_text="Sum of per-metric ranks")
    normalized_sum = serializers.FloatField(
        allow_null=True, help_text="Sum of values as ratios to each metric's best"
    )


class JudgedOverSerializer(serializers.Serializer):
    judged = serializers.IntegerField()
    items = serializers.IntegerField()


class RankingRowSerializer(serializers.Serializer):
    rank = serializers.IntegerField(
        help_text="The board's rank: against both boards under the global scope"
    )
    board = serializers.ChoiceField(choices=BoardKind.values)
    model = serializers.CharField()
    team = serializers.CharField(allow_blank=True, help_text="Team name, else institution")
    model_url = serializers.CharField(allow_blank=True)
    paper_url = serializers.CharField(allow_blank=True)
    code_url = serializers.CharField(allow_blank=True)
    is_baseline = serializers.BooleanField(help_text="Off-the-shelf model run by maintainers")
    imported = serializers.BooleanField(help_text="A published result imported from elsewhere")
    evaluated_by_podium = serializers.BooleanField(
        help_text="Podium asked the model's endpoint every question itself (hosted evaluation)"
    )
    verified = serializers.BooleanField()
    verified_at = serializers.DateTimeField(allow_null=True)
    submitted_at = serializers.DateTimeField()
    date = serializers.DateTimeField(
        help_text="The board's date column: an imported result's published date, else "
        "verified on (official), else scored on"
    )
    judge_pending = serializers.BooleanField(help_text="The LLM judge's metrics are pending")
    judged_over = serializers.DictField(
        child=JudgedOverSerializer(),
        help_text="Judge metrics a maintainer accepted over a subset of their items, by key: "
        "how many items were judged of how many (empty: every value is over all its items)",
    )
    mean_rank = serializers.FloatField()
    wins = serializers.IntegerField()
    tiebreakers = TiebreakersSerializer()
    metrics = serializers.DictField(child=RankingMetricSerializer(), help_text="By metric key")
    submission_id = serializers.IntegerField()
    rank_interval = serializers.ListField(
        child=serializers.IntegerField(),
        min_length=2,
        max_length=2,
        allow_null=True,
        help_text="The 95% interval of the rank over the bootstrap replicates, [best, "
        "worst]; null until it is computed (in the background after each recompute)",
    )
    tier = serializers.IntegerField(
        allow_null=True,
        help_text="Statistical tier within the row's board (1 = the leader's): entries of one "
        "tier cannot be told apart from its leader; null with the rank interval",
    )
    category_rank = serializers.IntegerField(
        allow_null=True,
        help_text="The rank in the category asked for (`category=`), ranked as `rank` is "
        "(the benchmark's scope); null without one",
    )
    category_ranks = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="The rank in each of the benchmark's categories, by key ({} without any)",
    )
    model_facts = serializers.DictField(
        help_text="The model facts its submitter gave (type, parameters in billions, licence, "
        "precision, domain_specific), where the benchmark asks for them; {} else",
    )
    interval_note = serializers.ChoiceField(
        choices=list(INTERVAL_NOTES),
        allow_null=True,
        help_text=f'Why metrics lack an interval: "{NOTE_IMPORTED}" (no per-sample data), '
        f'"{NOTE_NOT_COMPUTED}" (scored before intervals existed), "{NOTE_JUDGE_PENDING}" '
        "(the judge metrics have none until judged); null otherwise",
    )


class AsOfSerializer(serializers.Serializer):
    """The snapshot an `?as_of=` page is read from (issue 33)."""

    id = serializers.IntegerField()
    taken_at = serializers.DateTimeField()
    sha256 = serializers.CharField(help_text="The sha256 of the snapshot's CSV")
    url = serializers.URLField(help_text="The snapshot's board page")


class RankingPageSerializer(serializers.Serializer):
    benchmark = serializers.CharField(help_text="The benchmark's slug")
    board = serializers.CharField()
    computed_at = serializers.DateTimeField(allow_null=True)
    count = serializers.IntegerField(help_text="Rows on the board (all pages)")
    next = serializers.CharField(allow_null=True)
    previous = serializers.CharField(allow_null=True)
    category = serializers.CharField(
        allow_null=True, help_text="The category asked for (its key), null for the overview"
    )
    metrics = serializers.ListField(
        child=serializers.CharField(), help_text="Column order (a category's columns on its tab)"
    )
    as_of = AsOfSerializer(
        required=False, help_text="With `?as_of=` only: the snapshot the rows are read from"
    )
    results = RankingRowSerializer(many=True)


class InvalidParametersSerializer(serializers.Serializer):
    """api.exceptions' envelope for invalid input."""

    detail = serializers.CharField()
    code = serializers.CharField(help_text="invalid")
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="The messages per parameter",
    )
