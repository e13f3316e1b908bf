"""``textxai run fim_difficulty`` and the fim_difficulty section of ``textxai demo``."""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from textxai.validation import nonnegative_int_arg, number_in, one_line, positive_int_arg
from textxai import fim, parallel
from textxai import stats

NAME = "fim_difficulty"
DATA_PARALLEL = True  # under accelerate: difficulties, flip strengths and shifts are split across processes
HELP = "example difficulty: largest eigenvalue of the Fisher information metric of the input embeddings"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--batch-size", type=positive_int_arg, default=16, help="texts per forward/backward batch (default 16)")
    parser.add_argument("--top", type=positive_int_arg, default=5, help="hardest / easiest texts listed in the report (default 5)")
    parser.add_argument("--min-flip", action="store_true",
                        help="also search the smallest L2 move along the top eigenvector that flips the prediction")
    parser.add_argument("--max-strength", type=number_in(0.0, 1e6), default=6.0, help="upper end of that search (default 6, as the paper)")
    parser.add_argument("--tol", type=number_in(0.0, 1e6), default=1e-3, help="bracket width of the binary search (default 1e-3)")
    parser.add_argument("--random-flips", action="store_true",
                        help="also replace --fraction of the words with random vocabulary words, --trials times")
    parser.add_argument("--fraction", type=number_in(0.0, 1.0), default=0.1, help="share of words replaced (default 0.1)")
    parser.add_argument("--trials", type=positive_int_arg, default=20, help="random substitutions per text (default 20)")
    parser.add_argument("--seed", type=nonnegative_int_arg, default=0, help="seed of the random substitutions (default 0)")
    parser.add_argument("--shift-against", metavar="PATH", default=None,
                        help="perturbed texts row-aligned with --data (.jsonl with 'text', or .csv/.tsv with a text "
                             "column): report lambda_max(perturbed) - lambda_max(original) per pair")


def _read_texts(path: str, column: str = "text") -> list[str]:
    """Texts of a .jsonl / .json / .csv / .tsv / .parquet file (field ``column``, else a field named text in any
    case; read by :mod:`textxai.tables`) or of a .txt file (one per line)."""
    from textxai.tables import TABLE_SUFFIXES, read_rows, read_text

    p, flag = Path(path), "--shift-against"
    if not p.is_file():
        raise ValueError(f"{flag} {path!r}: no such file; expected a .jsonl, .csv, .tsv or .txt file")
    if p.suffix.lower() == ".txt":
        return [line for line in read_text(p, flag).splitlines() if line.strip()]
    if p.suffix.lower() not in TABLE_SUFFIXES:
        raise ValueError(f"{flag} {path!r}: expected a .jsonl, .csv, .tsv or .txt file")
    rows = read_rows(p, flag)
    key = _column(rows[0], column)
    if key is None:
        raise ValueError(f"{flag} {path!r}: expected a column named {column!r} (--text-column); columns: {list(rows[0])}")
    texts = [r.get(key) for r in rows]
    bad = next((i for i, t in enumerate(texts) if not isinstance(t, str)), None)
    if bad is not None:
        raise ValueError(f"{flag} {path!r} row {bad + 1}: column {key!r} holds {texts[bad]!r:.40}; expected a text")
    return texts


def _column(row: dict, column: str):
    if column in row:
        return column
    return next((k for k in row if isinstance(k, str) and k.lower() in (column.lower(), "text")), None)


def _top_words(words, sensitivity, k: int = 3) -> list[str]:
    order = np.argsort(-np.asarray(sensitivity), kind="stable")[:k]
    return [words[i] for i in order]




def _histogram(values, title: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    vals = np.asarray(values, dtype=float)
    vals = vals[vals > 0]
    if vals.size:
        ax.hist(np.log10(vals), bins=30, color="#4f46e5")
    ax.set_xlabel("log10 lambda_max (FIM difficulty)")
    ax.set_ylabel("texts")
    ax.set_title(title)
    fig.tight_layout()
    return fig


def _scatter(x, y, xlabel: str, ylabel: str, title: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 4))
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = np.isfinite(x) & np.isfinite(y) & (x > 0)
    ax.scatter(np.log10(x[keep]), y[keep], s=10, alpha=0.6, color="#db2777")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    fig.tight_layout()
    return fig


def _perturbed_texts(shift_against, text_column: str, limit, n: int):
    """The --shift-against texts, read and checked before any model call."""
    if shift_against is None:
        return None
    perturbed = _read_texts(shift_against, text_column) if isinstance(shift_against, str) else list(shift_against)
    if limit is not None:
        perturbed = perturbed[:limit]
    if len(perturbed) != n:
        raise ValueError(f"--shift-against has {len(perturbed)} texts but --data has {n}: "
                         "expected row-aligned files of the same length")
    return perturbed


def _shift_histogram(shift):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.hist(shift, bins=40, color="#0d9488")
    ax.axvline(0, color="black", lw=1)
    ax.set_xlabel("lambda_max(perturbed) - lambda_max(original)")
    ax.set_ylabel("pairs")
    ax.set_title(f"difficulty shift: mean {shift.mean():.3g}, std {shift.std():.3g}")
    fig.tight_layout()
    return fig


def _figures(r: dict, n: int) -> dict:
    d = r["difficulty"]
    figures = {"difficulty_histogram": _histogram(d, f"FIM difficulty of {n} texts")}
    if "min_flip_strength" in r:
        figures["min_flip_strength"] = _scatter(d, r["min_flip_strength"], "log10 lambda_max", "min L2 strength that flips",
                                                f"r = {r['min_flip_correlation']['pearson_r']:.2f} (log lambda)")
    if "random_flip_rate" in r:
        figures["random_flip_rate"] = _scatter(d, r["random_flip_rate"], "log10 lambda_max", "random substitution flip rate",
                                               f"r = {r['random_flip_correlation']['pearson_r']:.2f} (log lambda)")
    if "shift" in r:
        figures["difficulty_shift"] = _shift_histogram(r["shift"]["values"])
    return figures


def _results(r: dict, texts, top: int) -> dict:
    """fim.compute's result as the runner's JSON: lists of floats, hardest and easiest texts."""
    d = r["difficulty"]
    order = np.argsort(-d, kind="stable")

    def entry(i):
        return {"index": int(i), "text": texts[i], "difficulty": float(d[i]), "prediction": int(r["predictions"][i]),
                "sensitive_words": _top_words(r["words"][i], r["word_sensitivity"][i])}

    results = {"difficulty": [float(x) for x in d], "predictions": [int(x) for x in r["predictions"]],
               "summary": r["summary"], "mean_difficulty": float(d.mean()), "median_difficulty": float(np.median(d)),
               "hardest": [entry(i) for i in order[:top]], "easiest": [entry(i) for i in order[::-1][:top]]}
    if "accuracy" in r:
        results["accuracy"] = r["accuracy"]
    if "min_flip_strength" in r:
        results.update(min_flip_strength=[float(x) for x in r["min_flip_strength"]],
                       min_flip_correlation=r["min_flip_correlation"],
                       flipped_within_max_strength=r["flipped_within_max_strength"])
    if "random_flip_rate" in r:
        results.update(random_flip_rate=[float(x) for x in r["random_flip_rate"]],
                       random_flip_correlation=r["random_flip_correlation"])
    if "shift" in r:
        sh = r["shift"]
        results["shift"] = {**sh, "values": [float(x) for x in sh["values"]]}
        results.update(shift_mean=sh["mean"], shift_std=sh["std"], shift_fraction_increased=sh["fraction_increased"])
    return results


def _sharded(fn):
    """Under accelerate: the texts of ``fn`` split across processes (the function itself in one process)."""
    return parallel.sharded(fn, over=("texts", "text_pairs"))


def _intervals(results: dict, figures: dict, intervals) -> None:
    ivs = stats.runner_intervals("fim_difficulty", results, intervals, figures,
                                 keys=["summary.mean", "summary.median", "summary.q10", "summary.q90"])
    for alias, key in (("mean_difficulty", "summary.mean"), ("median_difficulty", "summary.median")):
        if key in ivs:  # the flat scalars the command line prints
            ivs[alias] = ivs[key]


def _analyse(texts, text_pairs, labels, classifier, top=5, shift_against=None, text_column="text", limit=None,
             intervals=stats.DEMO_OPTIONS, **options):
    """fim.compute (``options``: :class:`textxai.fim.FIMOptions` fields) turned into the report's results and figures."""
    perturbed = _perturbed_texts(shift_against, text_column, limit, len(texts))
    r = fim.compute(texts, classifier, text_pairs, labels=labels, perturbed=perturbed,  # the pair stays as it is
                    perturbed_pairs=None if perturbed is None else text_pairs, return_eigenvector=True,
                    shard=_sharded, **options)
    results, figures = _results(r, texts, top), _figures(r, len(texts))
    _intervals(results, figures, intervals)
    return results, figures


def run(args, texts, text_pairs, labels, classifier):
    """Difficulty of every text, the hardest and easiest ones, and the optional §4.3 / §4.4 experiments."""
    return _analyse(texts, text_pairs, labels, classifier, top=args.top, shift_against=args.shift_against,
                    text_column=getattr(args, "text_column", "text") or "text", limit=getattr(args, "limit", None),
                    batch_size=args.batch_size, min_flip=args.min_flip, max_strength=args.max_strength, tol=args.tol,
                    random_flips=args.random_flips, fraction=args.fraction, trials=args.trials, seed=args.seed,
                    progress=not getattr(args, "no_progress", False), intervals=stats.cli_options(args))


def _demo_corpus(name: str = "sentiment", split: str = "test"):
    """Texts and labels of a split of a packaged demo corpus."""
    from textxai import demo as _demo

    corpus = _demo.load_corpus(name)
    return list(corpus[f"{split}_texts"]), [int(x) for x in corpus[f"{split}_labels"]]


def report(results: dict, title: str = "FIM difficulty") -> str:
    s = results["summary"]
    lines = [f"## {title}", "",
             f"{s['n']} texts: median lambda_max {stats.fmt(results, 'summary.median', 4)}, mean "
             f"{stats.fmt(results, 'summary.mean', 4)} (q10 {s['q10']:.4g}, q90 {s['q90']:.4g}, max {s['max']:.4g}). "
             "Higher = closer to the decision boundary."]
    if results.get("intervals"):
        lines.append(stats.interval_note({k: v for k, v in results["intervals"].items() if k.startswith("summary.")}))
    lines.append("")
    for key, head in (("hardest", "Hardest"), ("easiest", "Easiest")):
        lines.append(f"{head}:")
        for e in results[key]:
            lines.append(f"  {e['difficulty']:.4g}  [{', '.join(e['sensitive_words'])}]  {one_line(e['text'])}")
        lines.append("")
    if "accuracy" in results:
        a = results["accuracy"]
        lines.append(f"Accuracy: all {a['all']:.2f}, easiest quarter {a['easiest_quarter']:.2f}, "
                     f"hardest quarter {a['hardest_quarter']:.2f}")
    if "min_flip_correlation" in results:
        c = results["min_flip_correlation"]
        lines.append(f"Min flip strength vs log lambda_max: Pearson r {c['pearson_r']:.2f}, Spearman {c['spearman_rho']:.2f} "
                     f"(n = {c['n']}; {results['flipped_within_max_strength']:.0%} flip within the search range; "
                     "paper: -0.4)")
    if "random_flip_correlation" in results:
        c = results["random_flip_correlation"]
        lines.append(f"Random substitution flip rate vs log lambda_max: Pearson r {c['pearson_r']:.2f}, "
                     f"Spearman {c['spearman_rho']:.2f} (paper: 0.35)")
    if "shift" in results:
        sh = results["shift"]
        lines.append(f"Difficulty shift (perturbed - original): mean {sh['mean']:.4g}, std {sh['std']:.4g}, "
                     f"{sh['fraction_increased']:.0%} of pairs harder")
    return "\n".join(lines).rstrip() + "\n"


def demo(progress: bool = True):
    """Hardest and easiest demo-sentiment test texts with their most sensitive words; min flip strength."""
    from textxai.classifier import as_classifier

    texts, labels = _demo_corpus("sentiment", "test")
    classifier = as_classifier("textxai/demo-sentiment")
    results, figures = _analyse(texts, None, labels, classifier, batch_size=16, top=3, min_flip=True,
                                max_strength=6.0, tol=1e-2, progress=progress)
    return report(results, "FIM difficulty — demo sentiment model, demo test texts"), results, figures
