"""Three forms in headless Chromium at a laptop's and a phone's width (1,400 and 390 px), in the
light and the dark colour scheme (issue 32: "pages that change need a browser test at both
widths whose screenshots you look at"):

- the hosted endpoint form (/b/<slug>/submit/endpoint/), where a signed-in person asks
  Podium to evaluate their model's endpoint;
- the entry owner's model endpoint page (/submissions/<pk>/model-endpoint/);
- the entry's details (/submissions/<pk>/details/).

Each test reads the form as a person would: the required fields carry the mark the legend
explains (and the `required` attribute a screen reader announces), a typical mistake is refused
next to its field, in words that say what to do, with the field described by its error, and
changes nothing in the database; the corrected form is saved and leads where it should. Every
state of every page is checked with axe-core (no serious or critical violation), never scrolls
sideways at 390 px, and is watched for Content-Security-Policy violations
(tests/e2e/conftest.py).

Screenshots: /tmp/e2e_form_<name>_<width>_<scheme>.png, <name> being hosted, hosted-refused,
endpoint, endpoint-refused, details and details-refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.db import connection

from benchmark.services import ensure_plugin_benchmark, import_testset
from hosting.models import HostedEndpoint, HostedRequest
from inference.forms import INVALID_BASE_URL
from plugins.clinicalqa.plugin import plugin as clinicalqa
from submissions.models import Submission
from submissions.services import SubmissionDetails, create_submission
from tests.accounts.factories import PASSWORD, UserFactory
from tests.e2e.browser import (
    E2E_MARKS,
    assert_no_csp_violations,
    axe_report,
    axe_violations,
    chromium,
    playwright_api,
)
from tests.hosting.conftest import FACTS
from verifying.models import ModelEndpoint

pytestmark = E2E_MARKS

WIDTHS = [1400, 390]
SCHEMES = ["light", "dark"]
SAVED_NOTHING = "Nothing was saved: fix what is listed here and save again"
MISSING_SCHEME = "models.example.org/v1"  # the commonest mistake: the address without https://


@pytest.fixture
def benchmark(private_dir, tmp_path):
    """The demo clinical QA benchmark (it takes model endpoints and asks five model facts,
    four of them required), its demo test set active."""
    files = clinicalqa.write_demo(tmp_path / "clinicalqa")
    benchmark = ensure_plugin_benchmark("clinicalqa")
    import_testset(benchmark, files.test_set)
    return benchmark, files


@pytest.fixture
def person():
    return UserFactory(username="forms_e2e")


@pytest.fixture
def entry(benchmark, person, django_capture_on_commit_callbacks):
    """Their published upload (not scored: nothing here needs its scores)."""
    benchmark, files = benchmark
    predictions = next(entry.predictions for entry in files.hosted)
    with django_capture_on_commit_callbacks(execute=False):
        return create_submission(
            benchmark,
            owner=person,
            details=SubmissionDetails(
                model_name="Forms Model",
                institution="Forms Lab",
                contact_email="forms@example.org",
                model_url="https://example.org/forms-model",
                model_facts=dict(FACTS),
            ),
            predictions=predictions.read_bytes(),
        )


@pytest.fixture
def browser(live_server, benchmark, person, entry):
    """After every fixture that touches the database (tests/e2e/browser.py says why)."""
    with chromium() as browser:
        yield browser


def in_database(query: Callable[[], Any]) -> Any:
    """`query` (ORM calls) run in a thread of its own, on its own connection: Playwright's
    event loop in this thread makes Django refuse the ORM here (tests/e2e/browser.py)."""

    def run() -> Any:
        try:
            return query()
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()


def open_page(browser, live_server, width, scheme):
    """A signed-in page of a context at `width` in `scheme`."""
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_login", "forms_e2e")
    page.fill("#id_password", PASSWORD)
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
    return context, page


# The ids of the fields whose label carries the required mark, and of the required inputs.
MARKED = """
() => [...document.querySelectorAll("main form label")]
  .filter((label) => label.querySelector(".required-mark"))
  .map((label) => label.htmlFor)
"""
REQUIRED = """
() => [...document.querySelectorAll("main form [required]")].map((element) => element.id)
"""

# The outermost elements that reach past the window's right edge (for the failure message).
OVERFLOWING = """
(width) => {
  const out = [];
  for (const element of document.body.querySelectorAll("*")) {
    const box = element.getBoundingClientRect();
    if (box.right > width + 0.5 && !out.some((parent) => parent.contains(element))) {
      out.push(element);
    }
  }
  return out.map((element) => `${element.tagName.toLowerCase()}#${element.id} ends at ${
    Math.round(element.getBoundingClientRect().right)} px: ${element.outerHTML.slice(0, 120)}`);
}
"""


# Each text box of the form (text, e-mail, URL, password, number): its id, width and height.
BOXES = """
() => [...document.querySelectorAll("main form .field input:not([type=checkbox]):not([type=hidden])")]
  .map((box) => [box.id, Math.round(box.getBoundingClientRect().width),
                 Math.round(box.getBoundingClientRect().height)])
"""
# The space between a fieldset's own note and the first field under it, in px.
NOTE_GAPS = """
() => [...document.querySelectorAll("main form fieldset > .helptext")].map((note) =>
  note.nextElementSibling.getBoundingClientRect().top - note.getBoundingClientRect().bottom)
"""


def assert_form_layout(page) -> None:
    """The boxes are one width and one height (the API key and the numbers once were the
    browser's small default boxes), and a fieldset's note stands apart from the first field's
    label (it once read as that field's help)."""
    boxes = page.evaluate(BOXES)
    assert boxes
    assert {(width, height) for _, width, height in boxes} == {tuple(boxes[0][1:])}, boxes
    assert all(gap >= 8 for gap in page.evaluate(NOTE_GAPS)), page.evaluate(NOTE_GAPS)


def assert_required_marks(page, expected: list[str]) -> None:
    """The required fields, and only they, carry the mark and the attribute, and the legend
    says what the mark means."""
    assert page.evaluate(MARKED) == expected
    assert page.evaluate(REQUIRED) == expected
    playwright_api.expect(page.locator("main .required-legend")).to_have_text(
        "Fields marked * are required."
    )


def check_page(browser, page, name: str, width: int, scheme: str) -> None:
    """axe, no sideways scrolling, the form's layout, the screenshot, no CSP violation."""
    violations = axe_violations(page)
    assert not violations, "\n".join(axe_report(f"{name} [{width} px, {scheme}]", violations))
    scroll_width = page.evaluate("() => document.documentElement.scrollWidth")
    assert scroll_width <= width, (scroll_width, page.evaluate(OVERFLOWING, width))
    assert_form_layout(page)
    page.screenshot(path=f"/tmp/e2e_form_{name}_{width}_{scheme}.png", full_page=True)
    assert_no_csp_violations(browser, page)


def assert_field_error(page, field: str, message: str) -> None:
    """`message` shows under the field, which says it is invalid and is described by it."""
    expect = playwright_api.expect
    control = page.locator(f"#id_{field}")
    error = page.locator(f".field:has(#id_{field}) .errorlist")
    expect(error).to_have_text(message)
    expect(control).to_have_attribute("aria-invalid", "true")
    expect(control).to_have_accessible_description(re.compile(re.escape(message)))


def assert_summary(page, heading: str, field: str, label: str, message: str) -> None:
    """The refusal's summary: first under the heading, focused, in the first screen (at 390 px
    a field's error alone is a few screens down, out of sight), its line linking to the field."""
    expect = playwright_api.expect
    summary = page.locator("#form-summary")
    expect(summary).to_have_attribute("role", "alert")
    expect(summary.locator("h2")).to_have_text(heading)
    link = summary.get_by_role("link", name=label, exact=True)
    expect(link).to_have_attribute("href", f"#id_{field}")
    line = summary.locator("li", has=page.get_by_role("link", name=label, exact=True))
    # The label once: a message that starts with it is not prefixed with it again.
    expect(line).to_have_text(f"{label}: {message.removeprefix(f'{label}: ')}")
    assert page.evaluate("() => document.activeElement.id") == "form-summary"
    box = summary.bounding_box()
    assert box is not None
    assert box["y"] + box["height"] <= page.viewport_size["height"]


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("width", WIDTHS)
def test_the_hosted_endpoint_form(live_server, benchmark, person, browser, width, scheme):
    expect = playwright_api.expect
    slug = benchmark[0].slug
    context, page = open_page(browser, live_server, width, scheme)
    try:
        page.goto(f"{live_server.url}/b/{slug}/submit/endpoint/")
        expect(page.locator("h1")).to_contain_text("Submit a model endpoint")
        check_page(browser, page, "hosted", width, scheme)

        assert_required_marks(
            page,
            [
                "id_model_name",
                "id_institution",
                "id_contact_email",
                "id_model_url",
                "id_type",
                "id_licence",
                "id_precision",
                "id_domain_specific",
                "id_base_url",
                "id_model",
            ],
        )

        # The address without its scheme: refused at the field, nothing stored.
        page.fill("#id_model_name", "Forms Hosted Model")
        page.fill("#id_institution", "Forms Lab")
        page.fill("#id_contact_email", "forms@example.org")
        page.fill("#id_model_url", "https://example.org/forms-hosted")
        page.select_option("#id_type", FACTS["type"])
        page.fill("#id_parameters", FACTS["parameters"])
        page.fill("#id_licence", FACTS["licence"])
        page.select_option("#id_precision", FACTS["precision"])
        page.select_option("#id_domain_specific", FACTS["domain_specific"])
        page.fill("#id_base_url", MISSING_SCHEME)
        page.fill("#id_model", "forms-7b")
        page.fill("#id_api_key", "sk-forms-e2e")
        page.get_by_role("button", name="Check and queue").click()
        page.wait_for_load_state()
        assert_summary(
            page,
            "Nothing was submitted: fix what is listed here and check again",
            "base_url",
            "Base URL",
            INVALID_BASE_URL,
        )
        assert_field_error(page, "base_url", INVALID_BASE_URL)
        expect(page.locator("#id_model_name")).to_have_value("Forms Hosted Model")
        expect(page.locator("#id_api_key")).to_have_value("")
        assert in_database(
            lambda: (HostedRequest.objects.count(), HostedEndpoint.objects.count())
        ) == (
            0,
            0,
        )
        check_page(browser, page, "hosted-refused", width, scheme)

        # Corrected (and the key entered again): queued, on its own page.
        page.fill("#id_base_url", "https://models.example.org/v1")
        page.fill("#id_api_key", "sk-forms-e2e")
        page.get_by_role("button", name="Check and queue").click()
        page.wait_for_url(re.compile(r"/hosted/\d+/$"))
        expect(page.locator("#request-live h2")).to_contain_text("Status: Queued")
        stored = in_database(
            lambda: [
                (hosted.model_name, hosted.endpoint.base_url, hosted.endpoint.model)
                for hosted in HostedRequest.objects.select_related("endpoint")
            ]
        )
        assert stored == [("Forms Hosted Model", "https://models.example.org/v1", "forms-7b")]
    finally:
        context.close()


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("width", WIDTHS)
def test_the_model_endpoint_page(live_server, entry, browser, width, scheme):
    expect = playwright_api.expect
    context, page = open_page(browser, live_server, width, scheme)
    try:
        page.goto(f"{live_server.url}/submissions/{entry.pk}/model-endpoint/")
        expect(page.locator("h1")).to_contain_text("Model endpoint for verification")
        check_page(browser, page, "endpoint", width, scheme)

        assert_required_marks(page, ["id_base_url", "id_model"])

        page.fill("#id_base_url", MISSING_SCHEME)
        page.fill("#id_model", "forms-7b")
        page.fill("#id_api_key", "sk-forms-e2e")
        page.get_by_role("button", name="Save the endpoint").click()
        page.wait_for_load_state()
        assert_summary(page, SAVED_NOTHING, "base_url", "Base URL", INVALID_BASE_URL)
        assert_field_error(page, "base_url", INVALID_BASE_URL)
        expect(page.locator("#id_model")).to_have_value("forms-7b")
        expect(page.locator("#id_api_key")).to_have_value("")
        assert in_database(ModelEndpoint.objects.count) == 0
        check_page(browser, page, "endpoint-refused", width, scheme)

        page.fill("#id_base_url", "https://models.example.org/v1")
        page.fill("#id_api_key", "sk-forms-e2e")
        page.get_by_role("button", name="Save the endpoint").click()
        page.wait_for_url(f"{live_server.url}/submissions/{entry.pk}/")
        expect(page.locator(".messages")).to_contain_text("The model endpoint is registered.")
        stored = in_database(
            lambda: [
                (endpoint.base_url, endpoint.model, endpoint.has_api_key, endpoint.is_active)
                for endpoint in ModelEndpoint.objects.filter(submission_id=entry.pk)
            ]
        )
        assert stored == [("https://models.example.org/v1", "forms-7b", True, True)]
    finally:
        context.close()


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("width", WIDTHS)
def test_the_details_form(live_server, entry, browser, width, scheme):
    expect = playwright_api.expect
    context, page = open_page(browser, live_server, width, scheme)

    def details() -> tuple:
        return Submission.objects.values_list(
            "institution", "paper_url", "model_facts__licence"
        ).get(pk=entry.pk)

    try:
        page.goto(f"{live_server.url}/submissions/{entry.pk}/details/")
        expect(page.locator("h1")).to_contain_text("edit the details")
        expect(page.locator("#id_institution")).to_have_value("Forms Lab")
        expect(page.locator("#id_licence")).to_have_value(FACTS["licence"])
        # Worded as on the submit form, the facts in their own fieldset.
        expect(page.locator("main form legend")).to_have_text(["Details", "Model facts"])
        for field, label in [("model_url", "Model URL"), ("paper_url", "Paper URL")]:
            expect(page.locator(f"label[for=id_{field}]")).to_have_text(label)
        expect(page.locator("#id_authors_helptext")).to_have_text(
            "For challenge entries; separated by commas."
        )
        check_page(browser, page, "details", width, scheme)

        assert_required_marks(page, ["id_type", "id_licence", "id_precision", "id_domain_specific"])

        # A required model fact emptied: refused at its field, nothing saved (the other
        # changes neither).
        page.fill("#id_institution", "Forms Institute")
        page.fill("#id_paper_url", "https://doi.org/10.1000/forms")
        page.fill("#id_licence", "")
        page.get_by_role("button", name="Save").click()
        page.wait_for_load_state()
        check_page(browser, page, "details-refused", width, scheme)
        refusal = "Licence: required; a short text of at most 50 characters, e.g. apache-2.0."
        assert_summary(page, SAVED_NOTHING, "licence", "Licence", refusal)
        assert_field_error(page, "licence", refusal)
        expect(page.locator("#id_institution")).to_have_value("Forms Institute")
        assert in_database(details) == ("Forms Lab", "", FACTS["licence"])

        page.fill("#id_licence", "mit")
        page.get_by_role("button", name="Save").click()
        page.wait_for_url(f"{live_server.url}/submissions/{entry.pk}/")
        expect(page.locator(".messages")).to_contain_text("The entry's details are saved.")
        assert in_database(details) == ("Forms Institute", "https://doi.org/10.1000/forms", "mit")
    finally:
        context.close()
