"""The Content-Security-Policy header on every page type, through Django's test client (the
browser's side is tests/e2e/test_content_security_policy.py), and no template of ours that the
policy would refuse: no inline script, style block, style attribute or on* handler."""

import re
from pathlib import Path

import pytest
from django.urls import reverse

from accounts.services import create_api_token
from submissions.enums import EvaluationStatus
from tests.accounts.factories import UserFactory, maintainer_user
from tests.submissions.conftest import benchmark, private_dir, records  # noqa: F401 (fixtures)
from tests.submissions.factories import EvaluationFactory, SubmissionFactory, scored_entry

# The policy, written out: a test that compares against the setting would pass whatever the
# setting became. docs/deployment.md explains each directive.
POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; "
    "form-action 'self' https://github.com; frame-ancestors 'none'"
)
PROJECT_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def site(benchmark):  # noqa: F811
    """A public benchmark, a submitter with a scored entry and a queued one, a maintainer."""
    benchmark.is_public = True
    benchmark.save(update_fields=["is_public"])
    submitter = UserFactory()
    scored = scored_entry(benchmark, "Scored", {}, owner=submitter)
    queued = SubmissionFactory(benchmark=benchmark, owner=submitter, model_name="Queued")
    EvaluationFactory(submission=queued, status=EvaluationStatus.QUEUED)
    return {
        "benchmark": benchmark,
        "submitter": submitter,
        "scored": scored,
        "queued": queued,
        "maintainer": maintainer_user(),
    }


def pages(site):
    slug = site["benchmark"].slug
    scored, queued = site["scored"].pk, site["queued"].pk
    anyone = [
        "/",
        f"/b/{slug}/",
        f"/b/{slug}/community/",
        f"/b/{slug}/about/",
        "/api-guide/",
        "/api/docs/",
        "/api/docs/?script",
        "/api/schema/",
        reverse("api:benchmark-list"),
        reverse("api:rankings", args=[slug]),
        reverse("api:rankings", args=[slug]) + "?format=csv",
        "/accounts/login/",
        "/accounts/signup/",
        "/accounts/password/reset/",
        "/admin/login/",
        "/no-such-page/",
    ]
    submitter = [
        f"/b/{slug}/submit/",
        "/submissions/",
        f"/submissions/{scored}/",
        f"/submissions/{queued}/",
        f"/submissions/{queued}/status/",
        f"/submissions/{scored}/judge/",
        "/account/tokens/",
        "/accounts/logout/",
        reverse("api:submission-detail", args=[scored]),
        reverse("api:submission-list"),
    ]
    maintainer = [
        "/admin/",
        "/admin/submissions/submission/",
        f"/admin/submissions/submission/{scored}/change/",
        "/admin/submissions/evaluation/",
        "/admin/judging/judgejob/",
        "/admin/core/auditevent/",
        "/admin/verifying/modelendpoint/add/",
    ]
    return {None: anyone, "submitter": submitter, "maintainer": maintainer}


@pytest.mark.integration
@pytest.mark.django_db
def test_every_page_type_carries_the_policy(client, site):
    seen = {}
    for viewer, urls in pages(site).items():
        if viewer is None:
            client.logout()
        else:
            client.force_login(site[viewer])
        for url in urls:
            response = client.get(url)
            seen[url] = (response.status_code, response.get("Content-Security-Policy"))

    expected_status = {"/": 302, "/no-such-page/": 404}  # / redirects to the only benchmark
    assert seen == {url: (expected_status.get(url, 200), POLICY) for url in seen}
    assert len(seen) == 33


@pytest.mark.integration
@pytest.mark.django_db
def test_the_api_carries_the_policy_on_refusals_and_token_requests_too(client, site):
    _, raw = create_api_token(site["submitter"], name="script")
    bearer = {"HTTP_AUTHORIZATION": f"Bearer {raw}"}

    answers = [
        client.get(reverse("api:submission-list"), **bearer),
        client.get(reverse("api:submission-list")),  # 401
        client.get(reverse("api:benchmark-detail", args=["nope"])),  # 404
        client.post(reverse("api:submit", args=[site["benchmark"].slug]), **bearer),  # 400
    ]

    assert [(answer.status_code, answer["Content-Security-Policy"]) for answer in answers] == [
        (200, POLICY),
        (401, POLICY),
        (404, POLICY),
        (400, POLICY),
    ]


# What the policy refuses in markup: an inline <script> (one without src), a <style> block, a
# style attribute, an on* handler attribute, a javascript: URL.
REFUSED_MARKUP = {
    "inline script": re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE),
    "style block": re.compile(r"<style\b", re.IGNORECASE),
    "style attribute": re.compile(r"<[a-z][^>]*\sstyle=", re.IGNORECASE),
    "handler attribute": re.compile(r"<[a-z][^>]*\son[a-z]+=", re.IGNORECASE),
    "javascript: URL": re.compile(r"javascript:", re.IGNORECASE),
}


TEMPLATE_COMMENT = re.compile(r"\{%\s*comment\s*%\}.*?\{%\s*endcomment\s*%\}|\{#.*?#\}", re.DOTALL)


def our_templates():
    folders = [PROJECT_ROOT / "templates", *PROJECT_ROOT.glob("*/templates")]
    return sorted(path for folder in folders for path in folder.rglob("*.html"))


@pytest.mark.unit
def test_no_template_of_ours_has_markup_the_policy_refuses():
    templates = our_templates()
    found = [
        f"{path.relative_to(PROJECT_ROOT)}: {kind}"
        for path in templates
        for kind, pattern in REFUSED_MARKUP.items()
        if pattern.search(TEMPLATE_COMMENT.sub("", path.read_text()))
    ]

    assert len(templates) > 20
    assert found == []
