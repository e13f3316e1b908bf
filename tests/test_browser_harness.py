"""The browser harness's own test: a small Blocks app served in-process, driven in headless chromium."""
from __future__ import annotations

import urllib.request

import pytest

gr = pytest.importorskip("gradio")


_SERVED: list[str] = []
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1 never through a proxy


def _app():
    calls = []

    def shout(text: str, times: float) -> str:
        calls.append(text)
        return " ".join([text[::-1].upper()] * int(times))

    with gr.Blocks(title="harness") as demo:
        text = gr.Textbox(label="Text", elem_id="text")
        times = gr.Number(value=2, label="Times", elem_id="times", precision=0)
        button = gr.Button("Shout", elem_id="shout")
        out = gr.Textbox(label="Result", elem_id="result", interactive=False)
        button.click(shout, [text, times], out)
    demo.queue(max_size=5, default_concurrency_limit=2)
    return demo, calls


@pytest.mark.browser
def test_harness_serves_and_drives_a_blocks_app(page, gradio_url):
    demo, calls = _app()
    url = gradio_url(demo)
    _SERVED.append(url)
    assert url.startswith("http://127.0.0.1:")
    with _DIRECT.open(url, timeout=30) as response:  # served by this process
        assert response.status == 200
    # the harness keeps the app's own queue settings
    assert demo._queue.max_size == 5 and demo._queue.default_concurrency_limit == 2

    page.goto(url)
    page.locator("#text textarea").fill("abc xyz")
    page.locator("#times input").fill("3")
    page.locator("#shout").click()
    result = page.locator("#result textarea")
    page.wait_for_function("() => document.querySelector('#result textarea').value.length > 0")
    assert result.input_value() == "ZYX CBA ZYX CBA ZYX CBA"
    assert calls == ["abc xyz"]

    page.locator("#text textarea").fill("second")
    page.locator("#times input").fill("1")
    page.locator("#shout").click()
    page.wait_for_function("() => document.querySelector('#result textarea').value === 'DNOCES'")
    assert calls == ["abc xyz", "second"]


def test_harness_closed_the_previous_app():
    """Runs after the test above (file order): its server must be gone once the test ended."""
    if not _SERVED:
        pytest.skip("the browser test above did not run")
    with pytest.raises(OSError):  # URLError / connection refused
        _DIRECT.open(_SERVED[0], timeout=10)
