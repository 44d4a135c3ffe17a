"""`{% load judging %}`: the judge panel for the submission page.

The submissions app sits below this one and never imports it; its template includes the panel
through this tag, so a page of the lower app shows the higher app's state without a Python
import upward.
"""

from __future__ import annotations

from typing import Any

from django import template

from judging import selectors
from submissions.models import Evaluation

register = template.Library()


@register.inclusion_tag("judging/_panel.html")
def judge_panel(evaluation: Evaluation | None, viewer: Any) -> dict[str, Any]:
    """`{% judge_panel evaluation request.user %}`: the run's judge panel as `viewer` sees it
    (the page has already checked that the viewer may see the run)."""
    return {"panel": selectors.judge_panel(evaluation, viewer)}


@register.simple_tag
def judge_panel_state(evaluation: Evaluation | None, viewer: Any) -> Any:
    """`{% judge_panel_state evaluation request.user as panel %}`: the panel's state for a page
    that renders `judging/_panel.html` inside its own live region (the status page's), which
    polls when `panel.polling` says so."""
    return selectors.judge_panel(evaluation, viewer)


@register.filter
def thousands(value: int | None) -> str:
    """12345 -> "12,345" (django.contrib.humanize is not installed for one filter)."""
    return "" if value is None else f"{value:,}"
