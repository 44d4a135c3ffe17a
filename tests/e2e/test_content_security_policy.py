"""Every page type under the Content-Security-Policy, in headless Chromium (issue 11, point 10).

A visitor, a submitter, a maintainer and a superuser walk the site: home, the boards, About,
Submit, the entry pages (one polling with htmx), My submissions, API tokens, "Use the API", the
API docs (Swagger UI, which must render its operations, so its scripts ran), allauth's sign-in,
sign-up and sign-out pages, and the admin's index, change lists (with and without actions),
change pages, an action's confirmation page and the user page's widgets (a last test shows
the watcher does fail on an inline script, style attribute or handler). Each answer carries
the policy, and tests/e2e/browser.py fails the test on any violation in any page. A last test
follows "Sign in with GitHub" (a POST that redirects to github.com, which form-action must
allow) to a stand-in for GitHub's authorize page.

The screenshots land in the test's tmp_path and in /tmp/e2e_csp/, for a look.
"""

import re
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.utils.csp import build_policy

from submissions.enums import EvaluationStatus
from submissions.services import recompute_board
from tests.accounts.factories import PASSWORD, UserFactory, maintainer_user
from tests.config.test_content_security_policy import POLICY
from tests.e2e.browser import (
    E2E_MARKS,
    assert_no_csp_violations,
    chromium,
    playwright_api,
    run_action,
)
from tests.submissions.factories import EvaluationFactory, SubmissionFactory, scored_entry

SCREENSHOTS = Path("/tmp/e2e_csp")
GITHUB_AUTHORIZE = "https://github.com/login/oauth/authorize"

pytestmark = E2E_MARKS


@pytest.fixture
def people(benchmark):
    """A submitter with a published, scored entry and an evaluate-only one still queued (its
    page polls), a maintainer and a superuser."""
    submitter = UserFactory(username="sam")
    published = scored_entry(
        benchmark, "Sam Published", {"CVS_acc": 0.9, "NAP_acc": 0.5}, owner=submitter
    )
    queued = SubmissionFactory(benchmark=benchmark, owner=submitter, model_name="Sam Queued")
    queued_run = EvaluationFactory(submission=queued, status=EvaluationStatus.QUEUED)
    recompute_board(benchmark)
    maintainer_user(username="maria")
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    return {
        "submitter": submitter,
        "published": published,
        "queued": queued,
        "queued_run": queued_run,
        "root": root,
    }


@pytest.fixture
def browser(live_server, people):
    """After every fixture that touches the database (see tests/e2e/browser.py: chromium)."""
    with chromium() as browser:
        yield browser


class Walk:
    """Visits pages, checks each answer's policy and that nothing was refused, screenshots."""

    def __init__(self, browser, live_server, tmp_path, prefix):
        self.browser = browser
        self.base = live_server.url
        self.tmp_path = tmp_path
        self.prefix = prefix
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.page.set_default_timeout(20_000)
        self.visited: list[str] = []
        SCREENSHOTS.mkdir(exist_ok=True)

    def goto(self, path: str, name: str):
        response = self.page.goto(self.base + path)
        assert response is not None
        assert response.ok, f"{path}: HTTP {response.status}"
        self.check(response, name)
        return self.page

    def check(self, response, name: str) -> None:
        """The answer carries the policy (tests/config/test_content_security_policy.py writes
        it out; a nonce, should one appear, aside), and the page violated nothing."""
        header = response.headers.get("content-security-policy", "")
        assert strip_nonce(header) == POLICY, response.url
        self.done(name)

    def done(self, name: str) -> None:
        assert_no_csp_violations(self.browser, self.page)
        screenshot = self.tmp_path / f"{self.prefix}-{name}.png"
        self.page.screenshot(path=str(screenshot), full_page=True)
        shutil.copyfile(screenshot, SCREENSHOTS / screenshot.name)
        self.visited.append(name)


def strip_nonce(header: str) -> str:
    return re.sub(r" 'nonce-[A-Za-z0-9_-]+'", "", header)


def test_every_page_a_visitor_and_a_submitter_see_keeps_to_the_policy(
    live_server, people, benchmark, browser, tmp_path
):
    expect = playwright_api.expect
    slug = benchmark.slug
    walk = Walk(browser, live_server, tmp_path, "site")

    # A visitor.
    walk.goto("/", "home")
    expect(walk.page.locator("h1")).to_contain_text(benchmark.name)
    expect(walk.goto(f"/b/{slug}/", "official").locator("h1")).to_contain_text(benchmark.name)
    walk.goto(f"/b/{slug}/community/", "community")
    expect(walk.page.locator("table.board tbody")).to_contain_text("Sam Published")
    walk.goto(f"/b/{slug}/about/", "about")
    walk.goto("/api-guide/", "api-guide")
    expect(walk.page.locator("pre.example").first).to_have_css("overflow-x", "auto")
    walk.goto("/accounts/signup/", "sign-up")

    # Swagger UI renders the operations: its bundle and init script (a file) ran.
    walk.goto("/api/docs/", "api-docs")
    expect(walk.page.locator(".opblock-summary").first).to_be_visible()
    expect(walk.page.locator("body")).to_have_css("margin", "0px")  # swagger_ui.css
    walk.done("api-docs-rendered")

    # The submitter signs in on the site's form.
    walk.goto("/accounts/login/", "sign-in")
    walk.page.fill("#id_login", "sam")
    walk.page.fill("#id_password", PASSWORD)
    walk.page.get_by_role("button", name="Sign in", exact=True).click()
    expect(walk.page.get_by_text("Signed in as sam", exact=True)).to_be_visible()
    walk.done("signed-in")

    walk.goto(f"/b/{slug}/submit/", "submit")
    expect(walk.page.locator("#id_predictions")).to_be_visible()
    walk.goto("/submissions/", "my-submissions")
    expect(walk.page.locator("body")).to_contain_text("Sam Queued")
    walk.goto(f"/submissions/{people['published'].pk}/", "entry-scored")
    expect(walk.page.locator("table.result")).to_be_visible()

    # The queued entry's page polls its status with htmx, which must neither eval nor inject
    # its indicator style.
    status_path = f"/submissions/{people['queued'].pk}/status/"
    with walk.page.expect_response(lambda response: response.url.endswith(status_path)) as poll:
        walk.goto(f"/submissions/{people['queued'].pk}/", "entry-polling")
    assert poll.value.status == 200
    walk.check(poll.value, "entry-polled")
    assert walk.page.evaluate("() => htmx.config.includeIndicatorStyles") is False
    assert walk.page.evaluate("() => htmx.config.allowEval") is False
    assert walk.page.locator("head style").count() == 0

    walk.goto("/account/tokens/", "tokens")
    walk.page.fill("#id_name", "laptop")
    walk.page.get_by_role("button", name="Create token").click()
    expect(walk.page.locator(".new-token")).to_be_visible()
    expect(walk.page.locator(".new-token")).to_have_css("border-left-style", "solid")
    walk.done("token-created")

    walk.goto("/accounts/logout/", "sign-out")
    walk.page.get_by_role("button", name="Sign out").last.click()
    expect(walk.page.get_by_role("link", name="Sign in")).to_be_visible()
    walk.done("signed-out")

    assert len(walk.visited) == 19


def sign_in_to_the_admin(walk, username):
    walk.goto("/admin/login/?next=/admin/", f"admin-login-{username}")
    walk.page.fill("#id_username", username)
    walk.page.fill("#id_password", PASSWORD)
    walk.page.locator("input[type=submit]").click()
    playwright_api.expect(walk.page.locator("#site-name")).to_be_visible()
    walk.done(f"admin-index-{username}")


def test_the_admin_works_under_the_policy_for_a_maintainer_and_a_superuser(
    live_server, people, benchmark, browser, tmp_path
):
    expect = playwright_api.expect
    walk = Walk(browser, live_server, tmp_path, "admin")
    published = people["published"]

    sign_in_to_the_admin(walk, "maria")
    entries = "/admin/submissions/submission/"
    walk.goto(entries, "entries")
    expect(walk.page.locator("#result_list")).to_contain_text("Sam Published")
    # The list's filters and "select all" run from the admin's files.
    walk.page.locator("#action-toggle").check()
    expect(walk.page.locator(".action-counter")).to_contain_text("2 of 2 selected")
    walk.done("entries-selected")
    walk.goto(f"{entries}{published.pk}/change/", "entry")
    expect(walk.page.locator("fieldset", has_text="Latest run")).to_be_visible()
    walk.goto("/admin/submissions/evaluation/", "runs")
    walk.goto(f"/admin/submissions/evaluation/{people['queued_run'].pk}/change/", "run")
    walk.goto("/admin/judging/judgejob/", "judge-jobs")
    walk.goto("/admin/core/auditevent/", "audit")
    walk.goto("/admin/verifying/modelendpoint/add/", "endpoint-add")

    # An action's confirmation page (a reason for the rejection), not confirmed.
    run_action(
        walk.page, live_server.url + entries, "Sam Published", "Nominate for the Official board"
    )
    expect(walk.page.locator("ul.messagelist")).to_contain_text("Sam Published")
    walk.done("nominated")
    run_action(walk.page, live_server.url + entries, "Sam Published", "Reject, with a reason…")
    expect(walk.page.locator("textarea[name=reason]")).to_be_visible()
    walk.done("reject-reason")

    walk.page.context.clear_cookies()
    sign_in_to_the_admin(walk, "root")
    # The user page's permission pickers (SelectFilter2) are the admin's most scripted widget.
    walk.goto(f"/admin/accounts/user/{people['submitter'].pk}/change/", "user")
    expect(walk.page.locator("#id_user_permissions_from")).to_be_visible()
    walk.goto(f"/admin/benchmark/benchmark/{benchmark.pk}/change/", "benchmark")
    walk.goto("/admin/benchmark/testset/", "test-sets")
    walk.goto("/admin/judging/judgeendpoint/", "judge-endpoints")

    assert len(walk.visited) == 18


def test_sign_in_with_github_reaches_github_under_form_action(
    live_server, people, browser, tmp_path, settings
):
    providers = {**settings.SOCIALACCOUNT_PROVIDERS}
    providers["github"] = {
        **providers["github"],
        "APPS": [{"client_id": "podium-e2e-client", "secret": "podium-e2e-secret"}],
    }
    settings.SOCIALACCOUNT_PROVIDERS = providers
    walk = Walk(browser, live_server, tmp_path, "github")
    reached: list[str] = []

    def github(route):
        reached.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<h1>GitHub stand-in</h1>")

    walk.page.route("https://github.com/**", github)
    walk.goto("/accounts/login/", "sign-in")
    walk.page.get_by_role("button", name="Sign in with GitHub").click()
    playwright_api.expect(walk.page.locator("h1")).to_have_text("GitHub stand-in")

    assert len(reached) == 1
    authorize = urlsplit(reached[0])
    assert f"{authorize.scheme}://{authorize.netloc}{authorize.path}" == GITHUB_AUTHORIZE
    assert "client_id=podium-e2e-client" in authorize.query
    assert_no_csp_violations(browser, walk.page)


def test_the_watcher_fails_a_test_on_an_inline_script_or_style(live_server, people, browser):
    """The watcher itself can fail: a page served with the policy that carries an inline
    script, a style attribute and an inline handler is reported, by the event and the console."""
    page = browser.new_page()
    probe = f"{live_server.url}/csp-probe/"
    page.route(
        probe,
        lambda route: route.fulfill(
            status=200,
            content_type="text/html",
            headers={"Content-Security-Policy": build_policy(settings.SECURE_CSP)},
            body='<p style="color: red">x</p><script>document.title = "ran"</script>'
            '<img src="/nowhere.png" onerror="document.title = \'handler\'">',
        ),
    )
    page.goto(probe)

    with pytest.raises(AssertionError) as failure:
        assert_no_csp_violations(browser, page)

    report = str(failure.value)
    assert page.title() == ""  # nothing ran
    for directive in ("script-src-elem | inline", "style-src-attr | inline", "script-src-attr"):
        assert directive in report, report
    # The console's wording ("Refused to execute ...", or in newer Chromium "Executing inline
    # script violates ...") is caught either way.
    assert "console: Executing inline script violates" in report, report
