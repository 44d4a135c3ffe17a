"""What the browser tests share: Debian's Chromium driven by Playwright (``playwright install``
is never used; ``.ci/run`` installs ``chromium``), the marks that skip them where they cannot
run, the browser itself, and the admin's "select a row, pick an action, Go".

Every page a browser test opens is watched for Content-Security-Policy violations (issue 11):
the browser's console message ("Refused to load/execute/apply ...") and the page's
``securitypolicyviolation`` event, reported through a Playwright binding (Playwright's init
scripts and bindings go through the DevTools protocol, so the policy does not block the
watcher itself). A violation fails the test that caused it (tests/e2e/conftest.py checks after
the test's body) and, should one arrive later, the browser fixture's teardown.

`axe_violations` runs axe-core (vendored in static/vendor/axe-core, used by the tests only) on
an open page and returns the serious and critical violations (issue 13, point 12).
"""

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

CHROMIUM = Path("/usr/bin/chromium")
AXE_JS = Path(__file__).resolve().parents[2] / "static" / "vendor" / "axe-core" / "axe.min.js"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")

# Every browser test: the worker and the live server share the test's PostgreSQL database.
E2E_MARKS = [
    pytest.mark.e2e,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="the worker process must share the test database (PostgreSQL)",
    ),
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason=f"no system Chromium at {CHROMIUM} (apt-get install chromium)"
    ),
]


# Added to every document before its own scripts run. The capture listener on `document`
# sees violations of the document and of its elements.
CSP_LISTENER = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.__podiumCspViolation([
    event.effectiveDirective,
    event.blockedURI || "(inline)",
    `${event.sourceFile || document.URL}:${event.lineNumber}`,
    event.sample || "",
  ].join(" | "));
}, true);
"""
CONSOLE_REFUSALS = ("Refused to ", "Content Security Policy", "Content-Security-Policy")


@dataclass
class CspWatch:
    """The CSP violations seen in one browser's pages, not yet reported."""

    violations: list[str] = field(default_factory=list)

    def attach(self, context: Any) -> None:
        context.expose_binding(
            "__podiumCspViolation",
            lambda source, text: self.violations.append(f"{source['page'].url}: {text}"),
        )
        context.add_init_script(CSP_LISTENER)
        context.on("console", self._console)

    def _console(self, message: Any) -> None:
        if any(marker in message.text for marker in CONSOLE_REFUSALS):
            self.violations.append(f"{message.location.get('url', '?')}: console: {message.text}")

    def take(self) -> list[str]:
        """The violations seen since the last call (each is reported once)."""
        taken, self.violations = self.violations, []
        return taken


# The watches of the browsers open right now (the e2e conftest asks them after each test).
ACTIVE_WATCHES: list[CspWatch] = []


def csp_failure(violations: list[str]) -> AssertionError:
    lines = "\n".join(f"  - {violation}" for violation in violations)
    return AssertionError(f"Content-Security-Policy violations in the browser:\n{lines}")


class WatchedBrowser:
    """A Playwright browser whose every page is watched for CSP violations: ``new_page`` and
    ``new_context`` as Playwright's, everything else passed through."""

    def __init__(self, browser: Any, watch: CspWatch) -> None:
        self._browser = browser
        self.watch = watch

    def new_context(self, **options: Any) -> Any:
        context = self._browser.new_context(**options)
        self.watch.attach(context)
        return context

    def new_page(self, **options: Any) -> Any:
        # Playwright's own new_page makes a context we could not watch before the page opens.
        return self.new_context(**options).new_page()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)


def settle(page: Any) -> None:
    """Let the page's pending events (a violation is reported in a task of its own) reach the
    watcher: a round trip after two frames and a short timer."""
    page.evaluate(
        "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame("
        "() => setTimeout(done, 50))))"
    )


def assert_no_csp_violations(browser: WatchedBrowser, page: Any | None = None) -> None:
    """Fail now if any page of `browser` violated the policy (after settling `page`)."""
    if page is not None and not page.is_closed():
        settle(page)
    if violations := browser.watch.take():
        raise csp_failure(violations)


@contextlib.contextmanager
def chromium() -> Iterator[WatchedBrowser]:
    """Headless Chromium whose pages fail the test on any CSP violation. Playwright's sync API
    keeps an event loop running in its thread, and Django then refuses ORM calls there, so a
    test's browser fixture comes after every fixture that touches the database (its arguments)
    and the test itself makes none."""
    watch = CspWatch()
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        ACTIVE_WATCHES.append(watch)
        try:
            yield WatchedBrowser(browser, watch)
            # Violations reported after the test's body was checked (tests/e2e/conftest.py).
            if late := watch.take():
                raise csp_failure(late)
        finally:
            ACTIVE_WATCHES.remove(watch)
            browser.close()


# axe's result, cut down to what a failure report needs.
AXE_RUN = """
async () => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations.map((violation) => ({
    id: violation.id,
    impact: violation.impact,
    help: violation.help,
    nodes: violation.nodes.map((node) => ({
      target: node.target.join(" "),
      html: node.html.slice(0, 160),
      summary: node.failureSummary || "",
    })),
  }));
}
"""
AXE_FAILING_IMPACTS = ("serious", "critical")


def axe_violations(page: Any, impacts: tuple[str, ...] = AXE_FAILING_IMPACTS) -> list[dict]:
    """axe-core's violations on `page` as it is now, those of the given impacts only.

    axe is evaluated in the page's main world through the DevTools protocol (Playwright's
    `evaluate`), which the page's Content-Security-Policy does not govern, so the page is
    checked as served, under its real policy; `add_script_tag` would insert an inline
    <script> (the policy refuses it) and `bypass_csp` would check a page other than the one
    people get. axe itself evaluates no strings, so the CSP watcher stays quiet."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(AXE_JS.read_text(encoding="utf-8") + "\n;undefined")
    return [v for v in page.evaluate(AXE_RUN) if v["impact"] in impacts]


def axe_report(where: str, violations: list[dict]) -> list[str]:
    """One line per violation and element, for an assertion message."""
    return [
        f"{where}: {violation['id']} ({violation['impact']}): {violation['help']}\n"
        f"      at {node['target']}: {node['html']}\n      {node['summary']}".rstrip()
        for violation in violations
        for node in violation["nodes"]
    ]


def run_action(page, changelist, row_text, label):
    """On the admin list `changelist`, select the row showing `row_text` and run `label`."""
    page.goto(changelist)
    row = page.locator("#result_list tbody tr", has=page.get_by_text(row_text, exact=True))
    row.locator("input.action-select").check()
    page.select_option("select[name=action]", label=label)
    page.locator("button[name=index]").click()
