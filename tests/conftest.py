"""Fixtures shared by the whole suite.

pytest-django reads ``DJANGO_SETTINGS_MODULE`` from pyproject.toml (``config.settings.test``); the
database follows ``DATABASE_URL`` (SQLite in memory when unset, PostgreSQL in CI). Factories live
next to the tests of their app (``tests/<app>/factories.py``).
"""

import os
import tempfile
from pathlib import Path

import pytest

from tests import redis_server

# The NAP label store of this run (plugins/medvidbench/scoring/label_store.py): a fresh folder,
# not the user's cache, so no test depends on what an earlier run left there. Subprocesses
# (`manage.py score`) inherit it. Removed when the run ends.
_label_store = tempfile.TemporaryDirectory(prefix="podium-nap-labels-")
os.environ["PODIUM_NAP_LABEL_STORE"] = _label_store.name


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository's root folder (where manage.py is)."""
    return Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def redis_url():
    """A real Redis's URL (database 15): `PODIUM_TEST_REDIS_URL`, or one started for the session
    (tests/redis_server.py)."""
    try:
        with redis_server.redis_url() as url:
            yield url
    except RuntimeError as error:
        pytest.fail(str(error))
