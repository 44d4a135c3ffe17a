"""The world the API fuzzer reads and writes (tests/api/fuzz): the demo clinical QA
benchmark (categories, model facts, hosted evaluation), a published hosted entry of one
account and the token of another, so that a non-owner's view of a request is exercised."""

from tests.hosting.conftest import *  # noqa: F403
