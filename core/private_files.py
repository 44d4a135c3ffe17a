"""Private files: predictions, test sets, re-run answers and the media a re-run sends, kept in
Django's `storages["private"]` (docs/storage.md) and never served.

The storage is a folder on this machine by default (`PrivateFileSystemStorage`, at
PODIUM_PRIVATE_DIR) and an S3 bucket in production (`core.private_s3.PrivateS3Storage`, when
PODIUM_S3_BUCKET is set: config/storage.py). Every read and write of a private file goes
through the functions below, which name files by their storage key (`predictions/<slug>/...`,
`testsets/<slug>/...`): a model field holds the key, never a path.

Code that needs a file on the local disk (a parse that wants a path, a memory map) asks for
`verified_copy(name, sha256)`: a per-machine copy in PODIUM_PRIVATE_CACHE_DIR named by the
content's sha256, written under a temporary name and renamed only once its hash is checked, so
a cut-off or altered download never becomes the cached file.

A store that cannot be reached (S3 down, a folder that cannot be written) raises
`StorageUnavailable`, a `DomainError` whose message is safe to show: the endpoint, bucket and
the backend's own words go to the log only. A key that is not there raises
`FileNotFoundError`.
"""

from __future__ import annotations

import hashlib
import logging
import os
import posixpath
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage, Storage, storages

from core.exceptions import StorageUnavailable

logger = logging.getLogger(__name__)

PRIVATE = "private"
CHUNK = 1024 * 1024

UNAVAILABLE_MESSAGE = (
    "The private file store cannot be reached just now; nothing was stored or changed. "
    "Try again in a few minutes."
)


class PrivateFileCorrupt(RuntimeError):
    """A stored file whose bytes are not the ones recorded (its sha256 differs). Not a
    `DomainError`: no request fixes it; an operator restores the file."""

    def __init__(self, name: str, actual: str, expected: str) -> None:
        self.name, self.actual, self.expected = name, actual, expected
        super().__init__(
            f"private file {name} was altered: its sha256 is {actual}, the recorded one is "
            f"{expected}; no local copy was kept"
        )


class PrivateFileHasNoURL(RuntimeError):
    """Private files are never served: asking one for a URL is a programming error."""


class PrivateFileSystemStorage(FileSystemStorage):
    """The private store as a local folder: PODIUM_PRIVATE_DIR unless `location` is given
    (read each time, so a test can move it), files 0600 in folders 0700, no URL.

    A file is written under a temporary name, flushed, then linked into place, so a reader
    never sees half a file, a crash leaves no partial file under a real name, and a name that
    exists is never replaced (the storage picks another, as Django's own does)."""

    def __init__(self, location: str | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("file_permissions_mode", 0o600)
        kwargs.setdefault("directory_permissions_mode", 0o700)
        super().__init__(location=location, **kwargs)

    @property
    def base_location(self) -> str:
        return str(self._value_or_setting(self._location, settings.PODIUM_PRIVATE_DIR))

    @property
    def location(self) -> str:
        return os.path.abspath(self.base_location)

    def url(self, name: str | None) -> str:
        raise PrivateFileHasNoURL(f"private file {name!r} has no URL: it is never served")

    def _save(self, name: str, content: Any) -> str:
        self._refuse_served_folder()
        full_path = self.path(name)
        directory = os.path.dirname(full_path)
        os.makedirs(directory, mode=0o700, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=".", suffix=".part")
        try:
            with os.fdopen(handle, "wb") as stream:
                for chunk in content.chunks():
                    stream.write(chunk if isinstance(chunk, bytes) else chunk.encode())
                stream.flush()
                os.fsync(stream.fileno())
            os.chmod(temporary, 0o600)
            while True:
                try:
                    os.link(temporary, full_path)  # fails if the name exists: never replaces
                    break
                except FileExistsError:
                    name = self.get_available_name(name)
                    full_path = self.path(name)
        finally:
            Path(temporary).unlink(missing_ok=True)
        return os.path.relpath(full_path, self.location).replace("\\", "/")

    def _refuse_served_folder(self) -> None:
        """The settings refuse a private folder under MEDIA_ROOT at start-up; this checks
        again when a file is written (settings can change later, in tests) and adds
        STATIC_ROOT."""
        location = Path(self.location).resolve()
        for setting in ("MEDIA_ROOT", "STATIC_ROOT"):
            served = getattr(settings, setting, None)
            if served and location.is_relative_to(Path(served).resolve()):
                raise ImproperlyConfigured(
                    f"The private folder ({location}) must not be inside {setting} ({served})."
                )

    def missing(self, names: Sequence[str]) -> list[str]:
        """The names of `names` that are not files here, in order."""
        return [name for name in names if not os.path.isfile(self.path(name))]


def private_storage() -> Storage:
    """The configured private store (`STORAGES["private"]`)."""
    return storages[PRIVATE]


def is_local() -> bool:
    """Whether the private store is a folder on this machine."""
    return isinstance(private_storage(), FileSystemStorage)


def _translated(error: Exception, name: str, doing: str) -> Exception:
    """The error to raise for `error`, met while `doing` the file `name`: FileNotFoundError
    for a key that is not there, `StorageUnavailable` for a store that cannot be used, or
    `error` itself (a bug)."""
    if isinstance(error, FileNotFoundError):
        return error
    if "botocore" in sys.modules:
        # Imported here: boto3 is loaded only when the store is S3.
        from botocore.exceptions import BotoCoreError, ClientError

        if isinstance(error, ClientError):
            code = str(error.response.get("Error", {}).get("Code", ""))
            if code in {"404", "NoSuchKey", "NotFound"}:
                return FileNotFoundError(f"private file {name} is not in the store")
        if not isinstance(error, BotoCoreError | ClientError):
            return error
    elif not isinstance(error, OSError):
        return error
    logger.warning("private store: %s %s failed: %r", doing, name, error)
    return StorageUnavailable(UNAVAILABLE_MESSAGE)


@contextmanager
def _store_errors(name: str, doing: str) -> Iterator[None]:
    try:
        yield
    except (StorageUnavailable, PrivateFileCorrupt):
        raise
    except Exception as error:
        translated = _translated(error, name, doing)
        if translated is error:
            raise
        raise translated from error


def _checked_name(name: str) -> str:
    normal = posixpath.normpath(str(name))
    if not name or normal.startswith(("/", "../")) or normal in {".", ".."}:
        raise ValueError(f"not a private file name: {name!r}")
    return normal


def save(name: str, content: bytes) -> str:
    """Store `content` as `name` (a key such as `predictions/<slug>/<uuid>.json`) and return
    the name it was stored under: `name` itself unless a file of that name exists, which is
    never replaced (the store then picks another name). `StorageUnavailable` when the store
    cannot be written; then nothing is stored under a real name."""
    name = _checked_name(name)
    with _store_errors(name, "writing"):
        return private_storage().save(name, ContentFile(content))


def read(name: str) -> bytes:
    """The bytes of the private file `name` (`FileNotFoundError`, `StorageUnavailable`)."""
    name = _checked_name(name)
    with _store_errors(name, "reading"), private_storage().open(name, "rb") as stream:
        return stream.read()


def exists(name: str) -> bool:
    name = _checked_name(name)
    with _store_errors(name, "looking for"):
        return private_storage().exists(name)


def delete(name: str) -> None:
    """Remove the private file `name`; one already gone is fine."""
    name = _checked_name(name)
    with _store_errors(name, "deleting"):
        private_storage().delete(name)


def delete_unnamed(name: str) -> None:
    """Delete a stored file that no row names (its row was refused after it was stored). A
    store that is down by then leaves it behind, logged: named by no row, it is never read
    (docs/storage.md, "Deleting")."""
    try:
        delete(name)
    except StorageUnavailable:
        logger.warning("private store: %s is left behind, named by no row", name)


def missing(names: Sequence[str]) -> list[str]:
    """The names of `names` that are not in the store, in order (one listing on S3, rather
    than a request per name)."""
    names = [_checked_name(name) for name in names]
    storage = private_storage()
    with _store_errors(names[0] if names else "", "looking for"):
        if hasattr(storage, "missing"):
            return storage.missing(names)
        return [name for name in names if not storage.exists(name)]


# --- the local copies -----------------------------------------------------------------------


def cache_dir() -> Path:
    """This machine's folder of verified copies (PODIUM_PRIVATE_CACHE_DIR)."""
    return Path(settings.PODIUM_PRIVATE_CACHE_DIR)


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def verified_copy(name: str, sha256: str) -> Path:
    """A file on this machine holding the private file `name`, whose sha256 must be `sha256`.

    With the local store, the stored file itself (checked). With S3, PODIUM_PRIVATE_CACHE_DIR/
    <sha256[:2]>/<sha256>: used when its hash checks out, else downloaded again, into a
    temporary file hashed as it is written and renamed into place only if the hash is the
    one recorded. `PrivateFileCorrupt` when the stored bytes are not those (no copy is kept);
    `FileNotFoundError`, `StorageUnavailable` as `read`."""
    name = _checked_name(name)
    storage = private_storage()
    if isinstance(storage, FileSystemStorage):
        path = Path(storage.path(name))
        if not path.is_file():
            raise FileNotFoundError(f"private file {name} is not in the store")
        actual = _sha256_of(path)
        if actual != sha256:
            raise PrivateFileCorrupt(name, actual, sha256)
        return path
    target = cache_dir() / sha256[:2] / sha256
    if target.is_file():
        if _sha256_of(target) == sha256:
            return target
        logger.warning("private cache: %s was altered; downloading %s again", target, name)
        target.unlink(missing_ok=True)
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".part")
    try:
        digest = hashlib.sha256()
        with os.fdopen(handle, "wb") as output:
            with _store_errors(name, "downloading"), storage.open(name, "rb") as stream:
                while chunk := stream.read(CHUNK):
                    digest.update(chunk)
                    output.write(chunk)
            output.flush()
            os.fsync(output.fileno())
        if digest.hexdigest() != sha256:
            raise PrivateFileCorrupt(name, digest.hexdigest(), sha256)
        os.replace(temporary, target)
    finally:
        Path(temporary).unlink(missing_ok=True)
    return target


def read_verified(name: str, sha256: str) -> bytes:
    """The bytes of `name`, checked against `sha256`, through this machine's copy
    (`verified_copy`)."""
    return verified_copy(name, sha256).read_bytes()


# --- media folders ---------------------------------------------------------------------------


class MediaFolder:
    """The private files under one prefix (`frames/`, `frames/medsg-bench/`), as the media
    folder a re-run reads (`benchmark.media.MediaFolder`): `read` and `missing` by path
    relative to it. A path that leads outside the prefix is missing and cannot be read."""

    def __init__(self, prefix: str) -> None:
        self.prefix = _checked_name(prefix)

    def __str__(self) -> str:
        storage = private_storage()
        if isinstance(storage, FileSystemStorage):
            return storage.path(self.prefix)
        return f"the private store's {self.prefix}/"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MediaFolder) and other.prefix == self.prefix

    def __hash__(self) -> int:
        return hash(self.prefix)

    def __truediv__(self, child: str) -> MediaFolder:
        return MediaFolder(f"{self.prefix}/{child}")

    def _key(self, relative: str) -> str | None:
        normal = posixpath.normpath(posixpath.join(self.prefix, relative))
        return normal if normal.startswith(self.prefix + "/") else None

    def read(self, relative: str) -> bytes:
        key = self._key(relative)
        if key is None:
            raise OSError(f"{relative!r} points outside {self}")
        return read(key)

    def missing(self, relatives: Sequence[str]) -> list[str]:
        keys = {relative: self._key(relative) for relative in relatives}
        absent = set(missing([key for key in keys.values() if key is not None]))
        return [relative for relative, key in keys.items() if key is None or key in absent]

    def local_folder(self) -> Path | None:
        """The folder on this machine, with the local store (None with S3)."""
        storage = private_storage()
        if isinstance(storage, FileSystemStorage):
            return Path(storage.path(self.prefix))
        return None


def upload_folder(folder: Path, prefix: str) -> int:
    """Store every file under the local `folder` as `<prefix>/<its relative path>`, unless a
    file of that name is stored already (a development machine's demo media, written locally
    first when the store is S3). Returns how many were stored."""
    relatives = sorted(
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if path.is_file() and not path.name.startswith(".")
    )
    keys = [f"{prefix}/{relative}" for relative in relatives]
    stored = 0
    for key in missing(keys):
        save(key, (folder / key.removeprefix(prefix + "/")).read_bytes())
        stored += 1
    return stored
