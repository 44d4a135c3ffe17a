"""`{% load verifying %}`: the entry page's "Model endpoint for verification" box.

The submissions app sits below this one and never imports it; its template includes the box
through this tag (as it does the judge's panel).
"""

from __future__ import annotations

from typing import Any

from django import template

from submissions.models import Submission
from verifying import selectors

register = template.Library()


@register.inclusion_tag("verifying/_endpoint_panel.html")
def model_endpoint_panel(submission: Submission, viewer: Any) -> dict[str, Any]:
    """`{% model_endpoint_panel submission request.user %}`."""
    return {"panel": selectors.endpoint_panel(submission, viewer)}
