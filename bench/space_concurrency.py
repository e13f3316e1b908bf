"""N concurrent requests against a Space launched on 127.0.0.1 (issue 15 item 7): every request is either served
correctly or told to retry.

    python bench/space_concurrency.py [--app naopc] [--requests 20]

Launches ``spaces/<app>/app.py`` with its queue (``textxai.spaces.CONCURRENCY_LIMIT`` jobs at once,
``QUEUE_MAX_SIZE`` waiting), sends the requests at once from ``--requests`` threads (gradio_client), and
prints per outcome the count and the latencies: *served* (the same HTML as a direct call of the handler),
*retry* (refused with Gradio's "Queue is full ... please try again"), *wrong* (served, different result) and
*error* (anything else). Only 127.0.0.1 is used.
"""
from __future__ import annotations

import argparse
import sys
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from helpers import load_space_app  # noqa: E402  (the tests' Space loader: spaces/<name>/app.py as a module)

REQUESTS = {  # app -> (api name, arguments of one ordinary request)
    "naopc": ("/evaluate_texts", ["textxai/demo-sentiment", "a wonderful and moving film", "gradient", "auto", 5]),
    "inconsistency": ("/score_chains", ["a good film\na bad film\na good film", "1, 2", "whitespace", "pooled"]),
}


def first_html(result) -> str:
    return result[0] if isinstance(result, (list, tuple)) else result


def run(app_name: str = "naopc", n: int = 20, reference_handler=None) -> dict:
    """Launch the app, fire ``n`` concurrent requests, return {"outcomes": Counter, "latencies": {...}, "queue": ...}."""
    from gradio_client import Client

    from textxai import spaces

    app = load_space_app(app_name)
    api, arguments = REQUESTS[app_name]
    handler = reference_handler or getattr(app, api.strip("/"))
    expected = first_html(handler(*arguments))  # the direct call: warms the model cache too
    demo = app.demo
    demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True, show_error=True)
    url = demo.local_url
    outcomes, latencies, details = Counter(), {}, {}
    lock, start = threading.Lock(), threading.Barrier(n)

    def one(i: int):
        client = Client(url, verbose=False)
        start.wait()
        began = time.perf_counter()
        try:
            got = first_html(client.predict(*arguments, api_name=api))
            kind = "served" if got == expected else "wrong"
            detail = "" if kind == "served" else str(got)[:200]
        except Exception as error:  # noqa: BLE001 - the outcome is what is measured
            text = str(error)
            kind = "retry" if "queue is full" in text.lower() else "error"
            detail = f"{type(error).__name__}: {text[:200]}"
        with lock:
            outcomes[kind] += 1
            latencies.setdefault(kind, []).append(time.perf_counter() - began)
            details.setdefault(kind, detail)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    demo.close()
    return {"outcomes": outcomes, "latencies": latencies, "details": details,
            "queue": (spaces.CONCURRENCY_LIMIT, spaces.QUEUE_MAX_SIZE)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", default="naopc", choices=sorted(REQUESTS))
    parser.add_argument("--requests", type=int, default=20)
    args = parser.parse_args()
    res = run(args.app, args.requests)
    limit, size = res["queue"]
    print(f"{args.requests} concurrent requests to the {args.app} Space (concurrency {limit}, queue max size {size}):")
    for kind in ("served", "retry", "wrong", "error"):
        lat = sorted(res["latencies"].get(kind, []))
        span = f"  latency {lat[0]:.1f}-{lat[-1]:.1f} s" if lat else ""
        detail = f"  e.g. {res['details'][kind]}" if res["details"].get(kind) else ""
        print(f"  {kind:<7}{res['outcomes'][kind]:>3}{span}{detail}")


if __name__ == "__main__":
    main()
