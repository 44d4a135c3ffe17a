"""The states of a battle job and of its items, and of a category's fit.

A battle job moves through the engine's job states (`inference.enums.JobStatus`, re-exported
here; its one writer is `arena.services.set_job_status`). It never holds: a battle whose judge
calls got no usable verdict after every attempt is dropped (counted and shown), never guessed,
so nothing waits for a maintainer. Its items (the judge calls, two per battle) are labelled in
the arena's words."""

from __future__ import annotations

from django.db import models

from inference.enums import ACTIVE_JOB_STATES, JOB_TRANSITIONS, JobStatus

__all__ = ["ACTIVE_JOB_STATES", "JOB_TRANSITIONS", "FitStatus", "ItemState", "JobStatus", "Shown"]


class ItemState(models.TextChoices):
    PENDING = "pending", "Pending"
    DONE = "done", "Judged"
    FAILED = "failed", "No usable verdict after every attempt"


class Shown(models.TextChoices):
    """Which model's answer a round shows first: model A's (the newcomer's) or model B's."""

    MODEL_A = "model_a", "Model A first"
    MODEL_B = "model_b", "Model B first"


class FitStatus(models.TextChoices):
    """What the last rating of a category came to (`arena.services.rate_category`, its one
    writer): no battle between entries on the boards yet; every such entry rated; or some (or
    all) left "rating pending" because their battles have no finite Bradley-Terry rating, with
    the reason."""

    WAITING = "waiting", "No battles yet"
    RATED = "rated", "Rated"
    PARTLY_PENDING = "partly_pending", "Some ratings pending"
    PENDING = "pending", "Ratings pending"
