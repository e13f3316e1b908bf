"""``textxai run fim_difficulty`` and the fim_difficulty section of ``textxai demo``."""
from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np

from textxai.validation import one_line, positive_int_arg
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
    parser.add_argument("--max-strength", type=float, default=6.0, help="upper end of that search (default 6, as the paper)")
    parser.add_argument("--tol", type=float, default=1e-3, help="bracket width of the binary search (default 1e-3)")
    parser.add_argument("--random-flips", action="store_true",
                        help="also replace --fraction of the words with random vocabulary words, --trials times")
    parser.add_argument("--fraction", type=float, default=0.1, help="share of words replaced (default 0.1)")
    parser.add_argument("--trials", type=positive_int_arg, default=20, help="random substitutions per text (default 20)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random substitutions (default 0)")
    parser.add_argument("--shift-against", metavar="PATH", default=None,
                        help="perturbed texts row-aligned with --data (.jsonl with 'text', or .csv/.tsv with a text "
                             "column): report lambda_max(perturbed) - lambda_max(original) per pair")


def _read_texts(path: str, column: str = "text") -> list[str]:
    """Texts of a .jsonl / .csv / .tsv file (field ``column``, else any field named text in any case) or .txt."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"--shift-against={path!r}: no such file; expected a .jsonl, .csv, .tsv or .txt file")
    if p.suffix == ".jsonl":
        rows = [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]
        key = _column(rows[0] if rows else {}, column)
        if key is None:
            raise ValueError(f"--shift-against={path!r}: expected a {column!r} field in every line")
        return [str(r[key]) for r in rows]
    if p.suffix in (".csv", ".tsv"):
        with p.open(encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f, delimiter="\t" if p.suffix == ".tsv" else ","))
        key = _column(rows[0] if rows else {}, column)
        if key is None:
            raise ValueError(f"--shift-against={path!r}: expected a column named {column!r}")
        return [r[key] for r in rows]
    if p.suffix == ".txt":
        return [line for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]
    raise ValueError(f"--shift-against={path!r}: expected a .jsonl, .csv, .tsv or .txt file")


def _column(row: dict, column: str):
    if column in row:
        return column
    return next((k for k in row if k and k.lower() in (column.lower(), "text")), None)


def _label_ids(labels, classifier):
    """Gold labels as class ids: ints as given, label names matched to the model's labels (any case)."""
    if labels is None:
        return None
    if all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in labels):
        return np.asarray(labels, dtype=int)
    names = {str(v).lower(): k for k, v in classifier.labels.items()}
    ids = [names.get(str(x).lower()) for x in labels]
    if any(i is None for i in ids):
        unknown = sorted({str(x) for x, i in zip(labels, ids) if i is None})[:5]
        raise ValueError(f"--label-column: labels {unknown} are not among the model's labels {list(classifier.labels.values())}")
    return np.asarray(ids, dtype=int)


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


def _analyse(texts, text_pairs, labels, classifier, batch_size=16, top=5, min_flip=False, max_strength=6.0, tol=1e-3,
             random_flips=False, fraction=0.1, trials=20, seed=0, shift_against=None, progress=False,
             text_column="text", limit=None, intervals=stats.DEMO_OPTIONS):
    difficulty = parallel.sharded(fim.difficulty, over=("texts", "text_pairs"))  # fim.difficulty itself in one process
    res = difficulty(texts, classifier, text_pairs, batch_size=batch_size, return_eigenvector=True, progress=progress)
    d = res["difficulty"]
    order = np.argsort(-d, kind="stable")

    def entry(i):
        return {"index": int(i), "text": texts[i], "difficulty": float(d[i]), "prediction": int(res["predictions"][i]),
                "sensitive_words": _top_words(res["words"][i], res["word_sensitivity"][i])}

    results = {
        "difficulty": [float(x) for x in d],
        "predictions": [int(x) for x in res["predictions"]],
        "summary": fim.summarize(d),
        "mean_difficulty": float(d.mean()),
        "median_difficulty": float(np.median(d)),
        "hardest": [entry(i) for i in order[:top]],
        "easiest": [entry(i) for i in order[::-1][:top]],
    }
    figures = {"difficulty_histogram": _histogram(d, f"FIM difficulty of {len(texts)} texts")}
    ivs = stats.runner_intervals("fim_difficulty", results, intervals, figures,
                                 keys=["summary.mean", "summary.median", "summary.q10", "summary.q90"])
    for alias, key in (("mean_difficulty", "summary.mean"), ("median_difficulty", "summary.median")):
        if key in ivs:  # the flat scalars the command line prints
            ivs[alias] = ivs[key]
    labels = _label_ids(labels, classifier)
    if labels is not None:
        correct = res["predictions"] == labels
        q = np.quantile(d, [0.25, 0.75])
        results["accuracy"] = {"all": float(correct.mean()),
                               "easiest_quarter": float(correct[d <= q[0]].mean()),
                               "hardest_quarter": float(correct[d >= q[1]].mean())}
    if min_flip:
        s = parallel.sharded(fim.min_flip_strength, over=("texts", "text_pairs"))(texts, classifier, max_strength=max_strength, tol=tol, text_pairs=text_pairs,
                                  batch_size=batch_size, progress=progress)
        results["min_flip_strength"] = [float(x) for x in s]
        results["min_flip_correlation"] = fim.difficulty_correlation(d, s)
        results["flipped_within_max_strength"] = float(np.isfinite(s).mean())
        figures["min_flip_strength"] = _scatter(d, s, "log10 lambda_max", "min L2 strength that flips",
                                                f"r = {results['min_flip_correlation']['pearson_r']:.2f} (log lambda)")
    if random_flips:
        r = fim.random_substitution_flip_rate(texts, classifier, fraction=fraction, trials=trials, seed=seed,
                                              text_pairs=text_pairs, progress=progress)
        results["random_flip_rate"] = [float(x) for x in r["flip_rate"]]
        results["random_flip_correlation"] = fim.difficulty_correlation(d, r["flip_rate"])
        figures["random_flip_rate"] = _scatter(d, r["flip_rate"], "log10 lambda_max", "random substitution flip rate",
                                               f"r = {results['random_flip_correlation']['pearson_r']:.2f} (log lambda)")
    if shift_against is not None:
        perturbed = _read_texts(shift_against, text_column) if isinstance(shift_against, str) else list(shift_against)
        if limit is not None:
            perturbed = perturbed[:limit]
        if len(perturbed) != len(texts):
            raise ValueError(f"--shift-against has {len(perturbed)} texts but --data has {len(texts)}: "
                             "expected row-aligned files of the same length")
        dp = difficulty(perturbed, classifier, batch_size=batch_size, progress=progress)["difficulty"]
        shift = dp - d
        results["shift"] = {"values": [float(x) for x in shift], "mean": float(shift.mean()), "std": float(shift.std()),
                            "median": float(np.median(shift)), "fraction_increased": float((shift > 0).mean()),
                            "difficulty_perturbed": fim.summarize(dp)}
        results.update(shift_mean=float(shift.mean()), shift_std=float(shift.std()),
                       shift_fraction_increased=float((shift > 0).mean()))
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.hist(shift, bins=40, color="#0d9488")
        ax.axvline(0, color="black", lw=1)
        ax.set_xlabel("lambda_max(perturbed) - lambda_max(original)")
        ax.set_ylabel("pairs")
        ax.set_title(f"difficulty shift: mean {shift.mean():.3g}, std {shift.std():.3g}")
        fig.tight_layout()
        figures["difficulty_shift"] = fig
    return results, figures


def run(args, texts, text_pairs, labels, classifier):
    """Difficulty of every text, the hardest and easiest ones, and the optional §4.3 / §4.4 experiments."""
    return _analyse(texts, text_pairs, labels, classifier, batch_size=args.batch_size, top=args.top,
                    min_flip=args.min_flip, max_strength=args.max_strength, tol=args.tol,
                    random_flips=args.random_flips, fraction=args.fraction, trials=args.trials, seed=args.seed,
                    shift_against=args.shift_against, progress=not getattr(args, "no_progress", False),
                    text_column=getattr(args, "text_column", "text") or "text", limit=getattr(args, "limit", None),
                    intervals=stats.cli_options(args))


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
