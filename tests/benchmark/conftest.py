"""Fixtures for the benchmark app's database tests."""

from pathlib import Path

import pytest

from benchmark.selectors import clear_parsed_testsets


@pytest.fixture
def testset_dir(settings, tmp_path) -> Path:
    """The test sets' folder of a fresh local private store (not created yet), and no parsed
    test set cached."""
    settings.PODIUM_PRIVATE_DIR = tmp_path / "private"
    directory = tmp_path / "private" / "testsets"
    clear_parsed_testsets()
    yield directory
    clear_parsed_testsets()
