"""Reading and rendering helpers of the console's pages."""

from __future__ import annotations

from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from core.models import AuditEvent
from core.request_text import posted_text

from ..models import Evaluation, Submission
from ..selectors import metric_value
from .judge import entry_judge_jobs

# --- reading and rendering helpers ----------------------------------------------------------------


def entry_audit_trail(submission: Submission) -> QuerySet[AuditEvent]:
    """The audit rows about an entry, its runs and their judge jobs, newest first."""
    judge_jobs = entry_judge_jobs(submission)
    models = [Submission, Evaluation] + ([judge_jobs.model] if judge_jobs is not None else [])
    types = ContentType.objects.get_for_models(*models)
    runs = [str(pk) for pk in submission.evaluations.values_list("pk", flat=True)]
    about = Q(content_type=types[Submission], object_id=str(submission.pk)) | Q(
        content_type=types[Evaluation], object_id__in=runs
    )
    if judge_jobs is not None:
        jobs = [str(pk) for pk in judge_jobs.values_list("pk", flat=True)]
        about |= Q(content_type=types[judge_jobs.model], object_id__in=jobs)
    return AuditEvent.objects.filter(about).select_related("actor")


def action_note(request: HttpRequest) -> str:
    return posted_text(request, "note").strip()


def full_precision(value: Any) -> str:
    """A metric value at full precision, or a dash."""
    number = metric_value(value)
    return "—" if number is None else repr(number)


AUDIT_MOVE_KEYS = ("from", "to")
AUDIT_TEXT_KEYS = ("note", "reason")


def from_to(data: dict[str, Any]) -> str:
    if "from" in data or "to" in data:
        return f"{data.get('from', '')} → {data.get('to', '')}"
    return ""


def audit_details(data: dict[str, Any]) -> str:
    parts = [f"{key}: {data[key]}" for key in AUDIT_TEXT_KEYS if data.get(key)]
    parts += [
        f"{key}: {value}"
        for key, value in data.items()
        if key not in AUDIT_MOVE_KEYS + AUDIT_TEXT_KEYS and value not in (None, "")
    ]
    return "; ".join(parts)


def html_table(header: list[str], rows: list[tuple[Any, ...]]) -> SafeString:
    """An escaped HTML table (cells already marked safe are kept as they are)."""
    head = format_html_join("", "<th>{}</th>", ((cell,) for cell in header))
    body = format_html_join(
        "",
        "<tr>{}</tr>",
        ((format_html_join("", "<td>{}</td>", ((cell,) for cell in row)),) for row in rows),
    )
    # In a box of its own that scrolls sideways (static/css/admin.css): the admin's readonly
    # field clips a wide table (the per-dataset values had lost every column after VS_llm).
    return format_html(
        '<div class="admin-table-scroll"><table><thead><tr>{}</tr></thead><tbody>{}</tbody>'
        "</table></div>",
        head,
        body,
    )
