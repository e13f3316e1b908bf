"""Each Space's own default example, timed as a visitor's click runs it: the button's handler with the widgets'
default values, under the Space's per-request budget (``textxai.spaces.user_errors``: MAX_SECONDS of wall
time), on as many torch threads as the hosted free tier has cores (2).

    python bench/bench_spaces.py [--spaces naopc fim_difficulty ...] [--threads 2] [--repeat 1]

Prints, per Space and endpoint: seconds (first call: the model load included; later calls: warm), the process's CPU
seconds, model evaluations counted by the library's work budget, and whether it answered within the budget (the
audit: each stage's evaluations and seconds too); then one table of the judged calls, all six Spaces: evaluations,
CPU s, wall s, CPU s against the budget, within budget. Exit code
1 when the last (warm) call of a default example does not answer within its budget. Measure on an idle machine; a
shared one inflates the wall seconds (the CPU seconds much less, the evaluation counts not at all): there, read
``--budget-seconds 3000`` runs, where every example finishes and its CPU seconds / threads bound its idle time.
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPACES = ["naopc", "fim_difficulty", "toki_trust", "ceval", "inconsistency", "audit"]
SKIP = {"push", "attack_text", "load_example", "run_editor", "score_csv"}  # not the page's default example


def load_app(name: str):
    spec = importlib.util.spec_from_file_location(f"{name}_space_app", ROOT / "spaces" / name / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def default_calls(app):
    """``(endpoint name, handler, default inputs)`` of every button of the Space."""
    demo = app.demo
    functions = demo.fns.values() if isinstance(demo.fns, dict) else demo.fns
    for fn in functions:
        if fn.name in SKIP or fn.fn is None:
            continue
        yield fn.name, fn.fn, [getattr(component, "value", None) for component in fn.inputs]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spaces", nargs="+", default=SPACES, choices=SPACES)
    parser.add_argument("--threads", type=int, default=2, help="torch threads (the free tier: 2 cores)")
    parser.add_argument("--budget-seconds", type=float, default=None,
                        help="the per-request wall budget (default the Spaces': TEXTXAI_SPACE_MAX_SECONDS or 90)")
    parser.add_argument("--repeat", type=int, default=2,
                        help="calls per endpoint (the first loads the models; the last, warm, is judged)")
    args = parser.parse_args(argv)
    import os

    os.environ.setdefault("TQDM_DISABLE", "1")  # third-party loading bars
    if args.budget_seconds is not None:  # read when textxai.spaces is imported
        os.environ["TEXTXAI_SPACE_MAX_SECONDS"] = str(args.budget_seconds)
    import torch

    torch.set_num_threads(args.threads)
    from textxai import batching, spaces

    failed, table = [], []
    print(f"budget: {spaces.MAX_SECONDS:.0f} s and {spaces.MAX_EVALUATIONS:,} model evaluations per request; "
          f"{args.threads} torch threads")
    for name in args.spaces:
        app = load_app(name)
        for endpoint, handler, inputs in default_calls(app):
            for attempt in range(args.repeat):
                began, cpu = time.perf_counter(), time.process_time()
                error, out = None, None
                with batching.work_budget() as counted:
                    try:
                        out = handler(*inputs)
                    except Exception as exc:  # noqa: BLE001 - reported, not raised
                        error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
                seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
                ok = error is None and seconds <= spaces.MAX_SECONDS
                judged = attempt == args.repeat - 1
                print(f"{name:<15} {endpoint:<14} call {attempt + 1}: {seconds:6.1f} s  (cpu {cpu:6.1f} s)  {counted.used:>6,} evaluations  "
                      f"{'ok' if ok else 'OVER BUDGET / FAILED'}{'' if error is None else ' — ' + error}", flush=True)
                stages = stage_work(out)
                if stages:
                    print("    stages: " + ", ".join(f"{k} {v['evaluations']:,} ev / {v['seconds']:.1f} s"
                                                    for k, v in stages.items()), flush=True)
                if judged:
                    table.append((name, endpoint, counted.used, cpu, seconds, ok))
                    if not ok:
                        failed.append(f"{name}.{endpoint}")
    print(f"\nthe judged (last) call of each default example; budget {spaces.MAX_SECONDS:.0f} s wall per request")
    print(f"{'space':<15} {'endpoint':<14} {'evaluations':>11} {'CPU s':>7} {'wall s':>7} {'CPU / budget':>12}  within budget")
    for name, endpoint, used, cpu, seconds, ok in table:
        print(f"{name:<15} {endpoint:<14} {used:>11,} {cpu:>7.1f} {seconds:>7.1f} {cpu / spaces.MAX_SECONDS:>11.0%}  "
              f"{'yes' if ok else 'NO'}")
    print("all default examples answered within the budget" if not failed else f"not within the budget: {failed}")
    return 1 if failed else 0


def stage_work(out) -> dict:
    """The audit's model evaluations and seconds per stage, from the JSON its endpoint returns (else {})."""
    data = out[-1] if isinstance(out, tuple) and out and isinstance(out[-1], dict) else None
    stages = (data or {}).get("work", {}).get("stages", {})
    return {f"{tag}.{k}" if len(stages) > 1 else k: v for tag, m in stages.items() for k, v in m.items()}


if __name__ == "__main__":
    sys.exit(main())
