"""The `STORAGES["private"]` entry: where predictions, test sets, re-run answers and media are
kept (docs/storage.md).

A plain function of plain values, so the settings, the tests' S3 fixture and the scale-out test
build the entry the same way. Importing it imports neither django-storages nor boto3: the
backends are named by their dotted paths and loaded by Django's storage handler on first use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

FILESYSTEM_BACKEND = "core.private_files.PrivateFileSystemStorage"
S3_BACKEND = "core.private_s3.PrivateS3Storage"


def private_storage(
    *,
    bucket: str = "",
    endpoint_url: str = "",
    region: str = "",
    prefix: str = "private/",
    location: Path | None = None,
) -> dict[str, Any]:
    """The "private" storage entry: S3 (django-storages) in `bucket` when one is named, under
    the key prefix `prefix`, at `endpoint_url` for an S3-compatible server (MinIO, moto) and
    in `region` when given; else the local folder `location` (None: PODIUM_PRIVATE_DIR, read
    when a file is stored, so a test may move it).

    The credentials are not options: boto3 reads AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY
    (or an instance role) from the environment itself, so they are never in the settings and
    never on a debug page or in the admin."""
    bucket = bucket.strip()
    if not bucket:
        options: dict[str, Any] = {} if location is None else {"location": str(location)}
        return {"BACKEND": FILESYSTEM_BACKEND, "OPTIONS": options}
    endpoint_url = endpoint_url.strip()
    if endpoint_url and not endpoint_url.startswith(("https://", "http://")):
        raise ImproperlyConfigured(
            f"PODIUM_S3_ENDPOINT_URL must be an http(s) address, not {endpoint_url!r}."
        )
    key_prefix = prefix.strip().strip("/")
    if ".." in key_prefix.split("/"):
        raise ImproperlyConfigured(f"PODIUM_S3_PREFIX must not contain '..': {prefix!r}.")
    return {
        "BACKEND": S3_BACKEND,
        "OPTIONS": {
            "bucket_name": bucket,
            "endpoint_url": endpoint_url or None,
            "region_name": region.strip() or None,
            # The key prefix: every object is <prefix>/<name>.
            "location": key_prefix,
        },
    }
