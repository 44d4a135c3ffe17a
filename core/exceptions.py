"""The domain error hierarchy.

Services raise these; interfaces translate them: HTML views into messages, the API's exception
handler into 4xx JSON, commands into ``CommandError``. Catch ``DomainError`` to handle any of them.
They describe a refused request, never a bug: a bug stays an ordinary exception and a 500.
"""


class DomainError(Exception):
    """A request the domain refuses; the message is safe to show to the person who made it."""


class InvalidTransition(DomainError):
    """A state change that the state's transition map does not allow (e.g. verifying a draft)."""


class QuotaExceeded(DomainError):
    """The submitter has used up their submissions for the current window."""


class InvalidPredictions(DomainError):
    """An uploaded predictions file that cannot be scored: bad JSON, wrong row count, misaligned
    ids or qa_types (spec 2).

    ``messages`` holds one line per problem, so an interface can list the first few offending rows
    instead of a single opaque error.
    """

    def __init__(
        self,
        messages: list[str] | str,
        *,
        problems: list[dict] | None = None,
        total: int | None = None,
    ):
        self.messages: list[str] = [messages] if isinstance(messages, str) else list(messages)
        # Structured: [{"row": int | None, "field": str, "message": str}], for the API.
        self.problems: list[dict] = (
            problems
            if problems is not None
            else [{"row": None, "field": "", "message": message} for message in self.messages]
        )
        self.total: int = total if total is not None else len(self.problems)
        super().__init__("; ".join(self.messages))


class InvalidTestSet(DomainError):
    """A ground-truth file a maintainer tried to import that does not follow the benchmark's
    official format (spec 1); the message is the loader's, naming each bad record and field."""


class JudgeUnavailable(DomainError):
    """The LLM judge cannot be reached or is not configured; judging can be retried later."""


class InvalidRubric(DomainError):
    """A judge rubric that cannot work: a missing placeholder, an answer pattern that is not a
    regex with one group, an empty aspect list, a missing task label."""


class InvalidRankingPolicy(DomainError):
    """A benchmark's ranking method and order that cannot rank its board: a lexicographic
    method without an order, or an order naming a key that is not one of its metrics."""


class VerificationRefused(InvalidTransition):
    """A move to verified without the evidence it needs (the entry's newest re-run, done and
    within the tolerance; a note for re-verifying the maintainers' own result). The message says
    what is missing; `submissions.next_step` tells an interface where the next step is done."""


class DuplicatePredictions(DomainError):
    """A predictions file byte-identical to one another account published on the benchmark:
    an entry is the submitter's own model's predictions (issue 13)."""


class NotYourEntry(DomainError):
    """A change to an entry that only its owner (or, where allowed, a maintainer) may make:
    taking it off the boards, publishing it, editing its details (issue 13)."""


class InvalidName(DomainError):
    """A display name (a model's, a team's, an institution's, the authors) that cannot be
    stored: an invisible, control or bidi character, too long once normalised, or one that
    looks the same as a published entry's (`core.text`, `submissions.names`). `field` is the
    form field at fault, when the caller knows it."""

    def __init__(self, message: str, *, field: str = ""):
        self.field = field
        super().__init__(message)


class InvalidOption(DomainError):
    """A choice a submission must declare beside its file (a benchmark plugin's option, such as
    MedSG-Bench's box convention) that is missing or not one of the offered values. `field` is
    the option's key."""

    def __init__(self, message: str, *, field: str = ""):
        self.field = field
        super().__init__(message)


class InvalidRatings(DomainError):
    """Ratings a category cannot take (issue 15, `submissions.ratings.store_ratings`): an
    unknown or non-rating category, an entry of another benchmark, a rating or interval that
    is not a finite number in order, a negative battle count. The message names the entry and
    the field."""


class InvalidFact(DomainError):
    """A model fact a submission gives that the benchmark does not ask for, or a value it does
    not take (`benchmark.facts`); `field` is the first fact at fault and `problems` maps every
    refused fact to its message."""

    def __init__(self, message: str, *, field: str = "", problems: dict[str, str] | None = None):
        self.field = field
        self.problems = dict(problems or {})
        super().__init__(message)


class InvalidEndpoint(DomainError):
    """A model endpoint Podium cannot call for a hosted evaluation: a base URL that is not an
    http(s) URL, one with a user name, password or query (a key goes in the key field), an
    address on a private network, a setting out of range. `field` is the form field at
    fault, when there is one."""

    def __init__(self, message: str, *, field: str = ""):
        self.field = field
        super().__init__(message)


class StorageUnavailable(DomainError):
    """The private file store (a local folder or an S3 bucket, `core.private_files`) cannot be
    reached or written just now; the request changed nothing and may be sent again."""
