"""An entry's stored predictions file, read from the private store (core/private_files.py,
docs/storage.md) by the services that score, judge or rate it."""

from __future__ import annotations

from core import private_files
from submissions.models import Submission


def predictions_bytes(submission: Submission) -> bytes:
    """The bytes of the entry's predictions file (`FileNotFoundError` when it is not in the
    store, `core.exceptions.StorageUnavailable` when the store cannot be reached;
    `ValueError` for an entry without a file, an imported result)."""
    return private_files.read(submission.predictions_file)
