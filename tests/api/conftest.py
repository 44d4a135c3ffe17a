"""Fixtures for the API tests: the submissions fixtures (private folder, benchmarks, uploads)."""

from tests.submissions.conftest import *  # noqa: F403
