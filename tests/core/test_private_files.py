"""The private store (core/private_files.py): the local folder and a real S3 server (moto in
server mode, tests/s3_server.py), the verified local copies, and a store that is down."""

from __future__ import annotations

import hashlib
import os
import stat

import pytest

from core import private_files
from core.exceptions import StorageUnavailable
from core.private_files import MediaFolder, PrivateFileCorrupt, PrivateFileHasNoURL
from tests.s3_server import S3Server, new_bucket

pytestmark = pytest.mark.integration


@pytest.fixture
def local_store(settings, tmp_path):
    settings.PODIUM_PRIVATE_DIR = tmp_path / "private"
    settings.PODIUM_PRIVATE_CACHE_DIR = tmp_path / "cache"
    return tmp_path / "private"


def sha(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def test_the_local_store_writes_private_files_under_the_private_folder(local_store):
    name = private_files.save("predictions/demo/a.json", b"[1]")

    assert name == "predictions/demo/a.json"
    path = local_store / "predictions" / "demo" / "a.json"
    assert path.read_bytes() == b"[1]"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert private_files.read(name) == b"[1]"
    assert private_files.exists(name)
    # No temporary file is left beside it.
    assert sorted(os.listdir(path.parent)) == ["a.json"]


def test_a_stored_name_is_never_replaced(local_store):
    first = private_files.save("testsets/demo/v1.json", b"first")
    second = private_files.save("testsets/demo/v1.json", b"second")

    assert first == "testsets/demo/v1.json"
    assert second != first
    assert second.startswith("testsets/demo/v1")
    assert private_files.read(first) == b"first"
    assert private_files.read(second) == b"second"


def test_a_missing_file_is_file_not_found_and_delete_is_idempotent(local_store):
    with pytest.raises(FileNotFoundError):
        private_files.read("predictions/none.json")
    name = private_files.save("predictions/gone.json", b"x")
    private_files.delete(name)
    private_files.delete(name)
    assert not private_files.exists(name)


@pytest.mark.parametrize("name", ["", "/etc/passwd", "../outside.json", "a/../../b"])
def test_a_name_outside_the_store_is_refused(local_store, name):
    with pytest.raises(ValueError, match="not a private file name"):
        private_files.save(name, b"x")


def test_private_files_have_no_url(local_store, s3_storage):
    with pytest.raises(PrivateFileHasNoURL):
        private_files.private_storage().url("predictions/a.json")


def test_the_local_stores_verified_copy_is_the_file_itself(local_store):
    name = private_files.save("testsets/demo/v1.json", b"ground truth")

    assert private_files.verified_copy(name, sha(b"ground truth")) == local_store / name
    (local_store / name).write_bytes(b"altered")
    with pytest.raises(PrivateFileCorrupt, match="was altered"):
        private_files.verified_copy(name, sha(b"ground truth"))


def test_s3_stores_objects_under_the_prefix_and_nothing_locally(s3_storage, settings):
    name = private_files.save("predictions/demo/a.json", b"[1, 2]")

    assert name == "predictions/demo/a.json"
    assert s3_storage.object_keys() == ["private/predictions/demo/a.json"]
    assert s3_storage.get("private/predictions/demo/a.json") == b"[1, 2]"
    assert private_files.read(name) == b"[1, 2]"
    assert private_files.exists(name)
    assert not private_files.exists("predictions/demo/b.json")
    assert not settings.PODIUM_PRIVATE_DIR.exists()
    # Private: no grant to everyone, only the owner's.
    grants = s3_storage.acl_grants("private/predictions/demo/a.json")
    assert [grant["Permission"] for grant in grants] == ["FULL_CONTROL"]
    assert grants[0]["Grantee"]["Type"] == "CanonicalUser"


def test_s3_never_replaces_a_stored_name_and_deletes(s3_storage):
    first = private_files.save("testsets/demo/v1.json", b"first")
    second = private_files.save("testsets/demo/v1.json", b"second")

    assert second != first
    assert s3_storage.get(f"private/{first}") == b"first"
    private_files.delete(first)
    private_files.delete(first)
    assert s3_storage.object_keys() == [f"private/{second}"]
    with pytest.raises(FileNotFoundError):
        private_files.read(first)


def test_s3_verified_copy_downloads_once_into_the_cache(s3_storage, settings):
    content = b'{"records": []}'
    name = private_files.save("testsets/demo/v1.json", content)

    copy = private_files.verified_copy(name, sha(content))

    assert copy == settings.PODIUM_PRIVATE_CACHE_DIR / sha(content)[:2] / sha(content)
    assert copy.read_bytes() == content
    assert sorted(os.listdir(copy.parent)) == [sha(content)]
    # Served from the cache: the object may go, the copy stays.
    private_files.delete(name)
    assert private_files.read_verified(name, sha(content)) == content


def test_s3_an_altered_cache_file_is_downloaded_again(s3_storage):
    content = b"ground truth"
    name = private_files.save("testsets/demo/v1.json", content)
    copy = private_files.verified_copy(name, sha(content))
    copy.write_bytes(b"tampered")

    assert private_files.read_verified(name, sha(content)) == content


def test_s3_a_corrupt_download_never_becomes_the_cached_file(s3_storage, settings):
    content = b"ground truth"
    name = private_files.save("testsets/demo/v1.json", content)
    s3_storage.put(f"private/{name}", b"ground truth, altered in the bucket")

    with pytest.raises(PrivateFileCorrupt, match="no local copy was kept"):
        private_files.verified_copy(name, sha(content))

    folder = settings.PODIUM_PRIVATE_CACHE_DIR / sha(content)[:2]
    assert list(folder.iterdir()) == []


def test_s3_media_folder_lists_once_and_refuses_paths_outside_it(s3_storage):
    private_files.save("frames/medsg-bench/images/a.png", b"a")
    private_files.save("frames/medsg-bench/images/b.png", b"b")
    private_files.save("frames/other.png", b"o")
    folder = MediaFolder("frames/medsg-bench")

    assert folder.missing(["images/a.png", "images/c.png", "images/b.png", "../other.png"]) == [
        "images/c.png",
        "../other.png",
    ]
    assert folder.read("images/b.png") == b"b"
    with pytest.raises(OSError, match="points outside"):
        folder.read("../other.png")


def test_a_store_that_is_down_is_storage_unavailable(settings, monkeypatch, tmp_path):
    server = S3Server().start()
    try:
        bucket = new_bucket(server.endpoint_url)
        for key, value in {"AWS_ACCESS_KEY_ID": "t", "AWS_SECRET_ACCESS_KEY": "t"}.items():
            monkeypatch.setenv(key, value)
        settings.STORAGES = {**settings.STORAGES, "private": bucket.storage()}
        settings.PODIUM_PRIVATE_CACHE_DIR = tmp_path / "cache"
        name = private_files.save("predictions/a.json", b"[]")
    finally:
        server.stop()

    for call in (
        lambda: private_files.save("predictions/b.json", b"[]"),
        lambda: private_files.read(name),
        lambda: private_files.exists(name),
        lambda: private_files.verified_copy(name, sha(b"[]")),
    ):
        with pytest.raises(StorageUnavailable, match="cannot be reached just now"):
            call()
    # The failed download left no file in the cache.
    assert [path for path in (tmp_path / "cache").rglob("*") if path.is_file()] == []
