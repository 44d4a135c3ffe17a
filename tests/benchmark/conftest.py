"""Fixtures for the benchmark app's database tests."""

from pathlib import Path

import pytest

from benchmark.selectors import clear_parsed_testsets


@pytest.fixture
def testset_dir(settings, tmp_path) -> Path:
    """A fresh private test-set folder (not created yet), and no parsed test set cached."""
    directory = tmp_path / "private" / "testsets"
    settings.PODIUM_TESTSET_DIR = directory
    clear_parsed_testsets()
    yield directory
    clear_parsed_testsets()
