"""Fixtures shared by the whole suite.

pytest-django reads ``DJANGO_SETTINGS_MODULE`` from pyproject.toml (``config.settings.test``); the
database follows ``DATABASE_URL`` (SQLite in memory when unset, PostgreSQL in CI). Factories live
next to the tests of their app (``tests/<app>/factories.py``).
"""

import os
import tempfile
from pathlib import Path

import pytest

from tests import redis_server, s3_server

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


@pytest.fixture(scope="session")
def s3_endpoint():
    """A real S3-compatible server's URL: `PODIUM_TEST_S3_ENDPOINT_URL`, or a moto_server
    started for the session (tests/s3_server.py)."""
    try:
        with s3_server.s3_endpoint() as url:
            yield url
    except RuntimeError as error:
        pytest.fail(str(error))


@pytest.fixture
def s3_storage(s3_endpoint, settings, monkeypatch, tmp_path):
    """The private store in a fresh bucket of the test S3 server for this test (and a fresh
    local cache folder): yields the `tests.s3_server.S3Bucket`, whose `env()` a subprocess
    needs and whose `object_keys()` lists what was stored. The local private folder moves to an
    empty temporary one, so a test can check nothing was written there."""
    bucket = s3_server.new_bucket(s3_endpoint)
    for name, value in s3_server.credentials().items():
        monkeypatch.setenv(name, value)
    settings.PODIUM_PRIVATE_DIR = tmp_path / "local-private"
    settings.PODIUM_PRIVATE_CACHE_DIR = tmp_path / "private-cache"
    settings.PODIUM_S3_BUCKET = bucket.name
    settings.PODIUM_S3_ENDPOINT_URL = bucket.endpoint_url
    settings.STORAGES = {**settings.STORAGES, "private": bucket.storage()}
    return bucket
