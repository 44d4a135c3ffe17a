"""The API throttles' request log when the shared store is the database (api/throttle_log.py)."""

from django.db import models


class ThrottleHistory(models.Model):
    """One client's recent requests in one throttle scope: DRF's history (the times of the
    requests answered within the last period, newest first), in a row of its own.

    Written only by ``api.throttle_log.DatabaseRequestLog``, inside a transaction that starts by
    locking the row (an upsert), so concurrent requests in any number of processes read and write
    it one after another. Never edited by hand; rows of clients gone quiet are deleted now and
    then by the same log.
    """

    # DRF's cache key: "throttle_<scope>_<client>", e.g. "throttle_anon_203.0.113.7".
    bucket = models.CharField(max_length=255, primary_key=True)
    # Unix times with millisecond precision, space-separated, newest first.
    history = models.TextField(blank=True)
    # Unix time after which every entry is older than the period: the row no longer matters.
    expires_at = models.BigIntegerField(db_index=True)

    class Meta:
        verbose_name = "API throttle history"
        verbose_name_plural = "API throttle histories"

    def __str__(self) -> str:
        return f"{self.bucket}: {len(self.history.split())} requests"
