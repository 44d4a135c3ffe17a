"""Fixtures for the scale-out test: the submissions fixtures (a private folder per test, the
small test set, MedVidBench with it)."""

from tests.submissions.conftest import *  # noqa: F403
