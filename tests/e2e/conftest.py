"""Browser tests in the Debian chromium, driven by Playwright against the live server."""

import os
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in this thread; Django's ORM refuses
# to run inside one unless told it is safe (the test and the server are apart).
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM = Path("/usr/bin/chromium")
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


# A browser test takes at most half a minute on a busy machine; one still running after this long is stuck (the
# browser, its driver or the live server), and fails with every thread's stack (pytest-timeout) well before the
# suite's own limit (pytest.ini) would let it eat the run.
BROWSER_TEST_TIMEOUT_SECONDS = 180


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/e2e/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.timeout(BROWSER_TEST_TIMEOUT_SECONDS))


# How long a test waits for a page, an element or a condition before it fails. Every wait ends as soon as its
# condition holds, so a generous limit costs nothing when the test passes; it keeps a test green on a machine
# whose CPUs are busy many times over (a page that loads in 100 ms alone took over 10 s at a load of 16).
WAIT_LIMIT_MS = 30_000


@pytest.fixture(scope="session", autouse=True)
def waits_long_enough():
    sync_api = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package")
    sync_api.expect.set_options(timeout=WAIT_LIMIT_MS)


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        pytest.skip(f"browser tests need the Debian chromium at {CHROMIUM}")
    sync_api = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def open_as(browser, live_server):
    """A new browser context logged in as `user` (the session cookie of a forced login), at `path`."""
    from django.test import Client

    contexts = []

    def open_page(user, path: str, context=None):
        if context is None:
            client = Client()
            client.force_login(user)
            context = browser.new_context(base_url=live_server.url)
            context.add_cookies(
                [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
            )
            context.set_default_timeout(WAIT_LIMIT_MS)
            contexts.append(context)
        page = context.new_page()
        page.goto(live_server.url + path)
        return page

    yield open_page
    for context in contexts:
        context.close()
