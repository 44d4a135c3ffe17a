"""django-q2 entry points: take a primary key, re-fetch, call one service."""

from __future__ import annotations

import logging

from . import services
from .models import Evaluation

logger = logging.getLogger(__name__)


def task_score_evaluation(evaluation_id: int) -> str:
    evaluation = Evaluation.objects.filter(pk=evaluation_id).select_related("submission").first()
    if evaluation is None:
        logger.warning("evaluation %s vanished before scoring", evaluation_id)
        return "missing"
    return services.score_evaluation(evaluation).status


def task_reap_stale_evaluations() -> int:
    return services.reap_stale_evaluations()
