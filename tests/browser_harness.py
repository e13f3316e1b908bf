"""Browser harness: launch a Gradio app on 127.0.0.1 in-process and drive it with Playwright + chromium.

Browser tests skip with a reason when /usr/bin/chromium is missing, unless TEXTXAI_REQUIRE_BROWSER=1
(set by .ci/run), where they fail instead.
"""
from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = os.environ.get("TEXTXAI_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def _browser_missing_reason() -> str | None:
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        return f"chromium not found at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright)"
    return None


@pytest.fixture(scope="session")
def browser():
    reason = _browser_missing_reason()
    if reason:
        if os.environ.get("TEXTXAI_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser tests are required here but {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    context.close()


@pytest.fixture
def gradio_url():
    """A factory: ``url = gradio_url(demo)`` serves a ``gr.Blocks`` on 127.0.0.1; closed after the test."""
    launched = []

    def launch(demo) -> str:
        # no demo.queue() here: Blocks enables its queue itself, and calling queue() again would reset the
        # app's own settings (max_size, default_concurrency_limit) to Gradio's defaults
        _, url, _ = demo.launch(server_name="127.0.0.1", server_port=None, prevent_thread_lock=True,
                                quiet=True, share=False, show_error=True)
        launched.append(demo)
        return url

    yield launch
    for demo in launched:
        demo.close()
