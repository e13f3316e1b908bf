"""Cost curves at real lengths: each module's model evaluations, tokens, seconds and peak memory at 25 / 50 /
100 / 200 / 400 words, the limit beside each, and the growth exponent fitted over the lengths.

    .venv/bin/python bench/bench_curves.py [--words 25 50 100 200 400] [--texts 2] [--only naopc-beam ...] [--plot F]

Texts: real_texts.reviews_of_words (CEval's IMDb reviews where ../shared/reference is present, the demo reviews
joined otherwise) cut at exactly that many words; demo sentiment model on the CPU. Model evaluations are
counted by textxai.batching.work_budget (every batch any model runs: classifier, embedders), so they are exact
under any load; seconds are wall time under the machine's load (printed). "limit" is the forward passes the
method itself must make per text (omission N + 1, LIME its samples, the NAOPC beam 2N + 2: both limits need
at least one chain each), ``ratio`` = evaluations / limit. The exponent b of evaluations ~ a N^b is fitted by
least squares in log-log over the lengths measured.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_texts import reviews_of_words, source  # noqa: E402


def _naopc(clf, texts, method):
    from textxai import naopc

    return naopc.compute(texts, None, clf, attribution_method=method, normalization="beam")


def _toki(clf, texts, stage):
    from textxai import toki
    from textxai.toki import demo_index

    _, index = demo_index("sentiment")
    labels = clf.predict(texts).tolist()
    if stage == "assess":
        return toki.assess(clf, texts, labels, index, explainer="omission")
    return toki.toki_attack(clf, texts, index, labels=labels)


def _editor(clf, texts, name):
    from textxai.editors import get_editor

    return get_editor(name, clf)(texts)


def _ceval(clf, texts, name):
    from textxai import ceval

    candidates = _editor(clf, texts, name)
    chosen = ceval.pick_counterfactuals(texts, candidates, clf, k=1)
    return ceval.compute(texts, [c[0] for c in chosen], model=clf)


def _chains(clf, texts, name, steps=3):
    from textxai import inconsistency
    from textxai.editors import get_editor

    return inconsistency.feedback_chains(get_editor(name, clf), texts, clf, steps=steps, progress=False)


def _perplexity(clf, texts):
    from textxai.lm import perplexity

    return perplexity(texts, "textxai/smollm2-135m-instruct")


def workloads():
    """name -> (run(clf, texts), limit per text of n words)."""
    from textxai.attribution import word_attributions
    from textxai.fim import difficulty, min_flip_strength

    return {
        "omission": (lambda clf, t: word_attributions(t, clf, "omission"), lambda n: n + 1),
        "lime-1000": (lambda clf, t: word_attributions(t, clf, "lime", n_samples=1000), lambda n: 1000),
        "integrated-gradients": (lambda clf, t: word_attributions(t, clf, "integrated_gradients"), lambda n: 50),
        "naopc-beam-omission": (lambda clf, t: _naopc(clf, t, "omission"), lambda n: 2 * n + 2),
        "fim-difficulty": (lambda clf, t: difficulty(t, clf), lambda n: 1),
        "toki-assess": (lambda clf, t: _toki(clf, t, "assess"), lambda n: n + 1),
        "toki-attack": (lambda clf, t: _toki(clf, t, "attack"), lambda n: n + 1),
        "fim-min-flip": (lambda clf, t: min_flip_strength(t, clf), lambda n: 14),   # ceil(log2(6 / 1e-3)) + 1 steps
        "editor-substitution": (lambda clf, t: _editor(clf, t, "substitution"), lambda n: 1),
        "editor-deletion": (lambda clf, t: _editor(clf, t, "deletion"), lambda n: 1),
        "ceval-substitution": (lambda clf, t: _ceval(clf, t, "substitution"), lambda n: 2),
        "inconsistency-deletion-3": (lambda clf, t: _chains(clf, t, "deletion"), lambda n: 4),
        "lm-perplexity": (_perplexity, lambda n: 1),
    }


def _status_mb(key: str) -> float | None:
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) / 1024 for line in f if line.startswith(key + ":"))
    except (OSError, StopIteration):
        return None


class PeakMemory:
    """Peak resident memory of the process inside the block, above what it held at the start (MB). Freed memory
    is given back first (``gc.collect``, glibc's ``malloc_trim``) and on Linux the kernel's high-water mark is
    reset (``/proc/self/clear_refs`` 5), so each row measures its own peak; elsewhere ``ru_maxrss`` only grows,
    and a row below an earlier row's peak reads 0."""

    def __enter__(self):
        import ctypes
        import gc

        gc.collect()
        try:   # glibc keeps freed memory resident (an earlier row's 1 GB would hide this row's peak): give it back
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):
            pass
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            self.exact = True
        except OSError:
            self.exact = False
        self.start = _status_mb("VmRSS") if self.exact else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return self

    def __exit__(self, *exc):
        end = _status_mb("VmHWM") if self.exact else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        self.mb = max(end - self.start, 0.0)


def measure(clf, name, run, texts) -> dict:
    from textxai import attribution
    from textxai.batching import work_budget

    attribution._EXPLANATIONS._data.clear()      # each row pays for its own explanations
    with PeakMemory() as memory, work_budget() as budget:
        start = time.perf_counter()   # after PeakMemory's collection
        run(clf, texts)
        seconds = time.perf_counter() - start
    peak = memory.mb
    tokens = sum(len(clf.word_encoding(t).input_ids) for t in texts)
    return {"evaluations": budget.used / len(texts), "tokens": tokens / len(texts), "seconds": seconds / len(texts),
            "peak_mb": peak}


def exponent(xs, ys) -> float:
    xs, ys = np.asarray(xs, float), np.asarray(ys, float)
    ok = ys > 0
    return float(np.polyfit(np.log(xs[ok]), np.log(ys[ok]), 1)[0]) if ok.sum() >= 2 else float("nan")


def plot(curves: dict, path: str) -> None:
    """Log-log panels: model evaluations and seconds per text against words, one line per workload."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, key, label in ((axes[0], "evaluations", "model evaluations per text"), (axes[1], "seconds", "seconds per text")):
        colors = plt.cm.tab20(np.linspace(0, 1, max(len(curves), 2)))
        for i, (name, points) in enumerate(curves.items()):   # 13 workloads: 20 colours, 4 markers, 2 line styles
            ax.loglog([n for n, _ in points], [max(r[key], 1e-3) for _, r in points], marker="os^D"[i % 4],
                      linestyle="-" if i % 2 == 0 else "--", color=colors[i], label=name)
        ax.set_xlabel("words per text")
        ax.set_ylabel(label)
    axes[1].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def read_tables(paths) -> dict:
    """The curves of printed runs of this script (``name words tokens evaluations limit ratio s/text peak``)."""
    curves = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            cells = line.split()
            if len(cells) == 8 and cells[1].isdigit():
                curves.setdefault(cells[0], []).append((int(cells[1]), {"evaluations": float(cells[3].replace(",", "")),
                                                                         "seconds": float(cells[6])}))
    return curves


def main(argv=None):
    from baselines import demo_classifier

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--words", nargs="*", type=int, default=[25, 50, 100, 200, 400])
    parser.add_argument("--texts", type=int, default=2, help="texts per length")
    parser.add_argument("--only", nargs="*", default=None, help="workload names (default: all)")
    parser.add_argument("--plot", default=None, help="write log-log plots of evaluations and seconds per text here (png)")
    parser.add_argument("--plot-from", nargs="*", default=None, metavar="OUTPUT",
                        help="only plot (--plot) the tables printed by earlier runs of this script")
    args = parser.parse_args(argv)
    if args.plot_from:
        return plot(read_tables(args.plot_from), args.plot or "curves.png")
    clf = demo_classifier()
    jobs = {k: v for k, v in workloads().items() if args.only is None or k in args.only}
    print(f"texts: {source()}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {time.strftime('%Y-%m-%d %H:%M')}")
    print(f"{'workload':<22} {'words':>5} {'tokens':>6} {'evaluations':>11} {'limit':>6} {'ratio':>6} {'s/text':>8} {'peak MB':>8}")
    if any(name.startswith("toki") for name in jobs):   # the demo keyword index is built once, outside the rows
        from textxai.toki import demo_index

        demo_index("sentiment")
    if "lm-perplexity" in jobs:   # the packaged LM is loaded (GGUF de-quantized) once, outside the rows
        from textxai.lm import as_lm

        as_lm("textxai/smollm2-135m-instruct")
    curves = {}
    for name, (run, limit) in jobs.items():
        for n in args.words:
            texts = reviews_of_words(clf, n, args.texts)
            row = measure(clf, name, run, texts)
            row["limit"] = limit(n)
            curves.setdefault(name, []).append((n, row))
            print(f"{name:<22} {n:>5} {row['tokens']:>6.0f} {row['evaluations']:>11,.0f} {row['limit']:>6} "
                  f"{row['evaluations'] / row['limit']:>6.2f} {row['seconds']:>8.2f} {row['peak_mb']:>8.0f}", flush=True)
        ns = [n for n, _ in curves[name]]
        print(f"{name:<22} growth: evaluations ~ N^{exponent(ns, [r['evaluations'] for _, r in curves[name]]):.2f}, "
              f"seconds ~ N^{exponent(ns, [r['seconds'] for _, r in curves[name]]):.2f}", flush=True)
    if args.plot:
        plot(curves, args.plot)
    return curves


if __name__ == "__main__":
    main()
