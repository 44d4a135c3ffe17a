"""`{% load form_fields %}`: a form field's label as every Podium form shows it.

A required field's label ends in an asterisk, the form says what the asterisk means
(`core/_required_legend.html`), and the input carries Django's `required` attribute, which is
what a screen reader announces: the asterisk itself is hidden from it, so "required" is not
said twice.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.forms import BoundField
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()


@register.simple_tag
def field_label(field: BoundField, *, unmarked: bool = False) -> SafeString:
    """`{% field_label field %}`: Django's `<label>` for the field, without a suffix (the forms
    never had one in common), with the required mark when the field is required, unless
    `unmarked` (a picker whose fields are all needed, with no optional field to tell apart)."""
    if unmarked or not field.field.required:
        return field.label_tag(label_suffix="")
    contents = format_html('{}<span class="required-mark" aria-hidden="true">*</span>', field.label)
    return field.label_tag(contents, label_suffix="")


@register.inclusion_tag("core/_required_legend.html")
def required_legend(form: Any) -> dict[str, bool]:
    """`{% required_legend form %}`: what the asterisk means, above a form that has one."""
    return {"shown": any(field.required for field in form.fields.values())}


@register.filter
def after_label(error: Any, label: Any) -> str:
    """A field's error as a summary shows it after the field's label: without the label again
    where the error starts with it ("Licence: required; ..." under "Licence", whose summary
    line read "Licence: Licence: required; ...")."""
    text, prefix = str(error), f"{label}: "
    return text.removeprefix(prefix) if text.startswith(prefix) else text
