"""The API throttles' counters when the shared store is the database (api/throttle_counter.py)."""

from django.db import models


class ThrottleWindow(models.Model):
    """One client's request count in one throttle scope: the current fixed window's and the one
    before it (the sliding-window estimate weighs both).

    Written only by ``api.throttle_counter.DatabaseWindowCounter``, with one SQL upsert per request
    (``INSERT ... ON CONFLICT DO UPDATE ... RETURNING``), so concurrent requests in any number of
    processes each get a distinct count. Never edited by hand; rows of windows long past are
    deleted now and then by the same counter.
    """

    # "<scope>:<period seconds>:<client>", e.g. "anon:60:203.0.113.7" or "user:60:42".
    bucket = models.CharField(max_length=255, primary_key=True)
    # The window's index: floor(unix time / period). A new index starts a new count.
    window_index = models.BigIntegerField()
    hits = models.IntegerField()
    previous_hits = models.IntegerField()
    # Unix time after which the row no longer matters (the end of the next window).
    expires_at = models.BigIntegerField(db_index=True)

    class Meta:
        verbose_name = "API throttle window"

    def __str__(self) -> str:
        return f"{self.bucket}: {self.hits} in window {self.window_index}"
