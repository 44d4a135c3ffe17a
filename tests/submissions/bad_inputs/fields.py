"""Bad form fields (the predictions file itself is valid): missing, malformed and over-long
values, and a challenge entry without its team. The web form and the serializer word a few
messages differently; each case gives both. Names (model, team, institution, authors) as text
are checked by their own cases."""

from __future__ import annotations

from . import BadInput

REQUIRED = ["This field is required."]
BAD_URL = ["Enter a valid URL."]
TOO_LONG_INSTITUTION = (
    "Institution is 201 characters long once normalised; at most 200 are allowed."
)
LONG_URL = "https://example.org/" + "m" * 290  # 310 characters; the column holds 200


def both(id: str, fields: dict[str, str | None], errors: dict[str, list[str]]) -> BadInput:
    """A case the two channels word alike."""
    return BadInput(id=id, fields=fields, web_errors=errors, api_errors=errors)


CASES: list[BadInput] = [
    both("model-name-missing", {"model_name": None}, {"model_name": REQUIRED}),
    BadInput(
        id="model-name-blank",
        fields={"model_name": ""},
        web_errors={"model_name": REQUIRED},
        api_errors={"model_name": ["This field may not be blank."]},
    ),
    both("institution-missing", {"institution": None}, {"institution": REQUIRED}),
    both("contact-email-missing", {"contact_email": None}, {"contact_email": REQUIRED}),
    both(
        "contact-email-invalid",
        {"contact_email": "not-an-address"},
        {"contact_email": ["Enter a valid email address."]},
    ),
    BadInput(
        id="contact-email-longer-than-its-column",
        fields={"contact_email": "a" * 250 + "@example.org"},
        web_errors={
            "contact_email": ["Ensure this value has at most 254 characters (it has 262)."]
        },
        api_errors={"contact_email": ["Ensure this field has no more than 254 characters."]},
    ),
    both("model-url-missing", {"model_url": None}, {"model_url": REQUIRED}),
    both("model-url-not-a-url", {"model_url": "my model"}, {"model_url": BAD_URL}),
    both("model-url-javascript", {"model_url": "javascript:alert(1)"}, {"model_url": BAD_URL}),
    both("model-url-scheme-only", {"model_url": "https://"}, {"model_url": BAD_URL}),
    BadInput(
        id="model-url-longer-than-its-column",
        fields={"model_url": LONG_URL},
        web_errors={"model_url": ["Ensure this value has at most 200 characters (it has 310)."]},
        api_errors={"model_url": ["Ensure this field has no more than 200 characters."]},
    ),
    both("paper-url-invalid", {"paper_url": "doi:10.1000/182"}, {"paper_url": BAD_URL}),
    BadInput(
        id="code-url-longer-than-its-column",
        fields={"code_url": LONG_URL},
        web_errors={"code_url": ["Ensure this value has at most 200 characters (it has 310)."]},
        api_errors={"code_url": ["Ensure this field has no more than 200 characters."]},
    ),
    BadInput(
        id="institution-too-long",
        fields={"institution": "I" * 201},
        # The names rule (docs/names.md) counts once normalised, in the same words on both channels.
        web_errors={"institution": [TOO_LONG_INSTITUTION]},
        api_errors={"institution": [TOO_LONG_INSTITUTION]},
    ),
    BadInput(
        id="challenge-entry-without-team-or-authors",
        fields={"is_challenge_entry": "on"},
        api_fields={"is_challenge_entry": "true"},
        web_errors={
            "team_name": ["A challenge entry needs its team name and authors."],
            "authors": ["A challenge entry needs its team name and authors."],
        },
        api_errors={
            "team_name": ["A challenge entry needs its team name and authors."],
            "authors": ["A challenge entry needs its team name and authors."],
        },
    ),
    BadInput(
        id="no-predictions-file",
        build=None,
        web_errors={"predictions": REQUIRED},
        api_errors={"predictions": ["No file was submitted."]},
    ),
    BadInput(
        id="empty-predictions-file",
        build=lambda rows: b"",
        web_errors={"predictions": ["The submitted file is empty."]},
        api_errors={"predictions": ["The submitted file is empty."]},
    ),
    BadInput(
        id="predictions-sent-as-text",
        build=None,
        fields={"predictions": "[]"},
        web_errors={"predictions": REQUIRED},
        api_errors={
            "predictions": [
                "The submitted data was not a file. Check the encoding type on the form."
            ]
        },
    ),
]
