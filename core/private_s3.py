"""The private store in an S3 bucket (django-storages' S3Storage), for deployments where web and
worker machines share no disk (docs/storage.md). A module of its own so boto3 is imported only
where the store is S3 (`config.storage.private_storage` names it by its dotted path).

What it adds to S3Storage: the objects stay private (no ACL is sent, so the bucket's own
private default holds; no URL of any kind, signed or not, is ever made); a stored object is
never replaced (a name taken gets another, as on the local disk); short timeouts and a few
retries, so an S3 outage is an error in seconds rather than a request hanging for minutes;
and `missing`, one listing for many names.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import Any

from botocore.config import Config
from storages.backends.s3 import S3Storage
from storages.utils import clean_name

from core.private_files import PrivateFileHasNoURL

# Seconds to connect and to wait for a reply; attempts in all (botocore's "standard" retries).
CONNECT_TIMEOUT = 5
READ_TIMEOUT = 30
MAX_ATTEMPTS = 3


class PrivateS3Storage(S3Storage):
    def __init__(self, **options: Any) -> None:
        options.update(
            default_acl=None,
            querystring_auth=False,
            file_overwrite=False,
            custom_domain=None,
        )
        options.setdefault(
            "client_config",
            Config(
                connect_timeout=CONNECT_TIMEOUT,
                read_timeout=READ_TIMEOUT,
                retries={"max_attempts": MAX_ATTEMPTS, "mode": "standard"},
                s3={"addressing_style": "path"} if options.get("endpoint_url") else {},
            ),
        )
        super().__init__(**options)

    def url(self, name: str | None, *args: Any, **kwargs: Any) -> str:
        raise PrivateFileHasNoURL(f"private file {name!r} has no URL: it is never served")

    def missing(self, names: Sequence[str]) -> list[str]:
        """The names of `names` that are not stored, in order: one listing of the keys under
        their common folder, instead of a request per name."""
        if not names:
            return []
        folders = [posixpath.dirname(clean_name(name)) for name in names]
        common = posixpath.commonpath(folders) if all(folders) else ""
        prefix = self._normalize_name(common)
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        root = self._normalize_name("")
        stored = {
            item.key.removeprefix(root).lstrip("/")
            for item in self.bucket.objects.filter(Prefix=prefix)
        }
        return [name for name in names if clean_name(name) not in stored]
