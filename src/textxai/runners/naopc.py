"""``textxai run naopc`` and the naopc section of ``textxai demo``: AOPC and Normalized AOPC of attribution methods."""
from __future__ import annotations

import argparse
import sys

import numpy as np

from textxai.validation import int_in, nonnegative_int_arg, positive_int_arg, short_repr
from textxai import naopc, parallel
from textxai.attribution import available_methods
from textxai import stats

NAME = "naopc"
DATA_PARALLEL = True  # under accelerate: texts (and their attributions) are split across processes
HELP = "faithfulness of word attributions: AOPC comprehensiveness / sufficiency and Normalized AOPC"
DEMO_METHODS = ("omission", "input_x_gradient", "integrated_gradients")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--attribution-methods", nargs="+", default=["integrated_gradients"],
                        choices=list(available_methods()), metavar="METHOD",
                        help="attribution methods to compare: " + ", ".join(available_methods())
                             + "; default integrated_gradients")
    parser.add_argument("--attributions-column", default=None,
                        help="column of --data holding one list of word scores per row (instead of computing them)")
    parser.add_argument("--normalization", default="auto", choices=list(naopc.NORMALIZATIONS),
                        help="limits: exact (DP over word subsets), beam (lazy beam), beam-paper (the paper's Algorithm 1), "
                             "auto (exact when N <= --max-exact-words), none")
    parser.add_argument("--beam-size", type=positive_int_arg, default=None,
                        help="beam width of the beam limits (default 1 for beam, 5 for beam-paper)")
    parser.add_argument("--max-exact-words", type=int_in(1, 64), default=None,
                        help="largest N for exact limits: 2^N model calls per text (default 12 on CPU, 16 on CUDA)")
    parser.add_argument("--perturbation", default="mask", choices=list(naopc.PERTURBATIONS))
    parser.add_argument("--target", default="predicted", help="'predicted' (default) or a class index")
    parser.add_argument("--seed", type=nonnegative_int_arg, default=0, help="seed of lime / kernel_shap (default 0)")


def _target(value):
    if isinstance(value, str) and value != "predicted":
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"--target={value!r}: expected 'predicted' or a class index") from None
    return value


def _read_attributions(args) -> list[list[float]]:
    """The --attributions-column of --data: a list of numbers per row (a JSON list in a csv / tsv cell)."""
    import json

    from textxai.tables import load_column

    flag, column = "--attributions-column", args.attributions_column
    values = load_column(args.data, column, flag, args.split, args.limit, "any")
    out = []
    for i, value in enumerate(values):
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                value = None
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                            for v in value):
            raise ValueError(f"{flag} {column!r}: row {i + 1} of --data holds {short_repr(values[i], 60)}; expected a "
                             "list of numbers, one per word (a JSON list such as [0.1, -0.3] in a csv cell)")
        out.append([float(v) for v in value])
    return out


def _choice(rows, classifier, normalization, max_exact_words) -> str:
    from textxai.classifier import as_classifier

    device = as_classifier(classifier).device
    max_exact = max_exact_words or naopc.default_max_exact_words(device)
    return naopc.explain_choice([r["n_words"] for r in rows], normalization, max_exact, device.type)


def analyse(texts, text_pairs, classifier, attributions: dict, target="predicted",
            options: naopc.NAOPCOptions | None = None, intervals=stats.DEMO_OPTIONS):
    """Results per attribution set, a ranking by AOPC and by NAOPC, and the figures.

    ``options``: a :class:`textxai.naopc.NAOPCOptions` (normalization, beam_size, max_exact_words,
    perturbation, batch_size, seed, progress); ``None`` takes its defaults.
    """
    opts = naopc.NAOPCOptions() if options is None else options
    compare = parallel.sharded(naopc.compare_attributions, over=("texts", "attributions", "text_pairs", "target"),
                               merge=_join_methods)  # naopc.compare_attributions itself in one process
    res = compare(texts, classifier, attributions, text_pairs=text_pairs, target=target, options=opts)
    first = next(iter(res.values()))["per_example"]
    results = {
        "methods": {
            name: {k: r[k] for k in ("comprehensiveness", "sufficiency", "naopc_comprehensiveness", "naopc_sufficiency")}
            for name, r in res.items()
        },
        "n_texts": len(texts),
        "mean_words": float(np.mean([row["n_words"] for row in first])),
        "normalization_used": sorted({row["normalization"] for row in first}),
        "limits_choice": _choice(first, classifier, opts.normalization, opts.max_exact_words),
        "mean_lower": None if first[0]["lower"] is None else float(np.mean([row["lower"] for row in first])),
        "mean_upper": None if first[0]["upper"] is None else float(np.mean([row["upper"] for row in first])),
        "model_evaluations": int(sum(row["n_evaluations"] for row in first)),
        "per_example": {name: r["per_example"] for name, r in res.items()},
        "narrow_limit_texts": naopc.narrow_limit_texts(first),
    }
    if len(res) >= 2 and first[0]["lower"] is not None:
        names = list(res)
        for metric in ("comprehensiveness", "sufficiency"):
            raw = [res[n][metric] for n in names]
            norm = [res[n][f"naopc_{metric}"] for n in names]
            results[f"rank_agreement_{metric}"] = naopc.rank_agreement(raw, norm)
    figs = {}
    per_method = _intervals(res, results, intervals, figs)
    figs = {**figures(res, per_method), **figs}
    return results, figs


def _intervals(res: dict, results: dict, options, figs: dict) -> dict:
    """Per method: intervals over the texts (flat keys "method/summary"); every pair of methods compared."""
    keys = ("comprehensiveness", "sufficiency", "naopc_comprehensiveness", "naopc_sufficiency")
    per_method = {}
    for name, r in res.items():
        one = {k: r[k] for k in keys if r.get(k) is not None}
        one["per_example"] = r["per_example"]
        per_method[name] = stats.runner_intervals("naopc", one, {**(options or {}), "sample_size_sweep": False})
        if "intervals" in one:
            results["methods"][name]["intervals"] = one["intervals"]
            results.setdefault("intervals", {}).update({f"{name}/{k}": e for k, e in one["intervals"].items()})
    if not results.get("intervals"):
        return {}
    names = list(res)
    opts = {**stats.DEMO_OPTIONS, **options}
    results["comparisons"] = {
        f"{a} vs {b}": stats.compare("naopc", {**res[a]}, {**res[b]}, opts["confidence_level"], opts["n_resamples"],
                                     opts["seed"], keys=[k for k in keys if res[a].get(k) is not None])
        for i, a in enumerate(names) for b in names[i + 1:]}
    if opts.get("sample_size_sweep"):
        one = {**res[names[0]]}
        sweep = stats.sample_size_sweep("naopc", one, keys=[k for k in keys if one.get(k) is not None],
                                        sizes=opts["sweep_sizes"], confidence_level=opts["confidence_level"],
                                        n_resamples=min(opts["n_resamples"], 999), seed=opts["seed"])
        results["sample_size_sweep"] = {names[0]: sweep}
        figs["sample_size_sweep"] = stats.plot_sample_size_sweep(sweep, f"Interval width against n ({names[0]})")
    return per_method


def _yerr(intervals: dict, names, key):
    """Error bar lengths [[below], [above]] from per-method intervals (None without intervals)."""
    if not intervals:
        return None
    rows = [intervals.get(n, {}).get(key) for n in names]
    if any(r is None for r in rows):
        return None
    return np.nan_to_num([[r["score"] - r["ci_low"] for r in rows], [r["ci_high"] - r["score"] for r in rows]])


def _join_methods(parts: list[dict]) -> dict:
    """compare_attributions results of consecutive shares of the texts as one result (means over all texts)."""
    from textxai.naopc.texts import mean_scores

    return {name: mean_scores([row for part in parts for row in part[name]["per_example"]]) for name in parts[0]}


def figures(res: dict, intervals: dict | None = None) -> dict:
    """Bar charts of the scores (error bars: the intervals of ``intervals[method][summary]``) and the curves."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(res)
    normalized = res[names[0]]["naopc_comprehensiveness"] is not None
    fig, axes = plt.subplots(1, 2 if normalized else 1, figsize=(10 if normalized else 5.5, 3.8), squeeze=False)
    x = np.arange(len(names))
    panels = [("AOPC", "")] + ([("NAOPC", "naopc_")] if normalized else [])
    for ax, (title, prefix) in zip(axes[0], panels):
        ax.bar(x - 0.2, [res[n][f"{prefix}comprehensiveness"] for n in names], 0.4, label="comprehensiveness ↑",
               color="#4f46e5", yerr=_yerr(intervals, names, f"{prefix}comprehensiveness"), capsize=4)
        ax.bar(x + 0.2, [res[n][f"{prefix}sufficiency"] for n in names], 0.4, label="sufficiency ↓", color="#f59e0b",
               yerr=_yerr(intervals, names, f"{prefix}sufficiency"), capsize=4)
        ax.set_xticks(x, names, rotation=15)
        level = next(iter(next(iter(intervals.values())).values()))["confidence_level"] if intervals else None
        ax.set_title(f"{title} (error bars: {level:.0%} CI over texts)" if level else title)
        ax.legend(fontsize=8)
    fig.tight_layout()
    out = {"scores": fig}
    row = res[names[0]]["per_example"][0]
    out["curves_first_text"] = curve_figure(row, f"perturbation curves, text 0 ({names[0]})")
    return out


def curve_figure(row: dict, title: str = "perturbation curves"):
    """Probability drop after k words removed: comprehensiveness, sufficiency and the two limit orderings."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.8))
    k = np.arange(1, row["n_words"] + 1)
    ax.plot(k, row["comprehensiveness_curve"], "o-", color="#4f46e5", label=f"comprehensiveness {row['comprehensiveness']:.3f}")
    ax.plot(k, row["sufficiency_curve"], "o-", color="#f59e0b", label=f"sufficiency {row['sufficiency']:.3f}")
    if row.get("upper_curve") is not None:
        ax.plot(k, row["upper_curve"], "--", color="#059669", label=f"upper limit {row['upper']:.3f}")
        ax.plot(k, row["lower_curve"], "--", color="#dc2626", label=f"lower limit {row['lower']:.3f}")
    ax.axhline(0, color="black", lw=0.6)
    ax.set_xlabel("words removed")
    ax.set_ylabel("p(x) - p(x without them)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def report(results: dict, title: str = "NAOPC") -> str:
    lines = [f"## {title}", "",
             f"{results['n_texts']} texts, {results['mean_words']:.1f} words on average; limits: "
             f"{', '.join(results['normalization_used'])}; {results['model_evaluations']} model evaluations."]
    if results.get("limits_choice"):
        choice = results["limits_choice"]
        lines.append(choice[0].upper() + choice[1:] + ".")
    if results["mean_lower"] is not None:
        lines.append(f"Mean AOPC limits of this model: lower {results['mean_lower']:.3f}, upper {results['mean_upper']:.3f}.")
    if results.get("narrow_limit_texts"):
        listed = ", ".join(str(i + 1) for i in results["narrow_limit_texts"])
        lines.append(f"Warning: text(s) {listed} have limits closer than {naopc.NARROW_LIMITS:g} (upper - lower): the "
                     "model barely reacts to removing words there, so their NAOPC rescales noise.")
    w = 20 if results.get("intervals") else 13
    lines += ["", f"{'method':<22} {'comp ↑':<{w}} {'suff ↓':<{w}} {'NAOPC comp ↑':<{w}} {'NAOPC suff ↓':<{w}}"]
    for name, m in results["methods"].items():
        cells = [stats.fmt(m, k) for k in ("comprehensiveness", "sufficiency", "naopc_comprehensiveness",
                                             "naopc_sufficiency")]
        lines.append(f"{name:<22} " + " ".join(f"{c:<{w}}" for c in cells).rstrip())
    if results.get("intervals"):
        lines += ["", stats.interval_note(results["intervals"])]
    for pair, comparison in results.get("comparisons", {}).items():
        a, b = pair.split(" vs ")
        lines += ["", f"Paired comparison on the same texts ({pair}):", stats.compare_table(comparison, a, b)]
    for metric in ("comprehensiveness", "sufficiency"):
        key = f"rank_agreement_{metric}"
        if key in results:
            lines.append(f"Kendall tau of the method ranking, AOPC vs NAOPC ({metric}): {results[key]:.2f}")
    lines += ranking_flips(results)
    return "\n".join(lines) + "\n"


def ranking_flips(results: dict) -> list[str]:
    """One sentence per pair of methods whose order under AOPC and under NAOPC differ (the paper's point:
    normalizing by each text's limits can change which explanation looks more faithful), with the paired
    test of the NAOPC difference when the report has one."""
    methods, out = results["methods"], []
    names = list(methods)
    for metric in ("comprehensiveness", "sufficiency"):
        sign = 1 if metric == "comprehensiveness" else -1  # comprehensiveness: higher is better; sufficiency: lower
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                raw = sign * (methods[a][metric] - methods[b][metric])
                norm = sign * (methods[a][f"naopc_{metric}"] - methods[b][f"naopc_{metric}"])
                if raw * norm >= 0:
                    continue
                first, second = (a, b) if raw > 0 else (b, a)
                pairs = results.get("comparisons", {})
                test = (pairs.get(f"{a} vs {b}") or pairs.get(f"{b} vs {a}") or {}).get(f"naopc_{metric}") or {}
                p = test.get("p_value")
                verdict = "" if p is None or p != p else (
                    f" (paired Wilcoxon p = {p:.2g}{': within noise on these texts' if p >= 0.05 else ''})")
                out.append(f"Ranking flip ({metric}): AOPC rates {first} better than {second} "
                           f"({methods[first][metric]:.3f} vs {methods[second][metric]:.3f}); normalized by each "
                           f"text's limits, {second} is better ({methods[second][f'naopc_{metric}']:.3f} vs "
                           f"{methods[first][f'naopc_{metric}']:.3f}){verdict}.")
    return out


def run(args, texts, text_pairs, labels, classifier):
    """AOPC / NAOPC of each attribution method (or of the attributions in --attributions-column)."""
    if args.attributions_column is not None:
        attributions = {args.attributions_column: _read_attributions(args)}
    else:
        attributions = {m: None for m in args.attribution_methods}
    options = naopc.NAOPCOptions(normalization=args.normalization, beam_size=args.beam_size,
                                 max_exact_words=args.max_exact_words, perturbation=args.perturbation,
                                 batch_size=args.batch_size, seed=args.seed,
                                 progress=not getattr(args, "no_progress", False))
    results, figs = analyse(texts, text_pairs, classifier, attributions, target=_target(args.target),
                            options=options, intervals=stats.cli_options(args))
    if parallel.is_main_process():  # which limits "auto" chose and why (the summary below prints numbers only)
        choice = results["limits_choice"]
        print(f"textxai run naopc: {choice}", file=sys.stderr, flush=True)
    for name, m in results["methods"].items():  # flat scalars for the command line summary
        for key, value in m.items():
            results[f"{name}/{key}"] = value
    return results, figs


def _demo_texts(max_words: int = 12, n: int = 6) -> list[str]:
    """The ``n`` shortest held-out demo sentiment texts of at most ``max_words`` words."""
    from textxai.demo import load_corpus
    from textxai.words import tokenize

    texts = load_corpus("sentiment")["test_texts"]
    short = sorted((len(tokenize(t)), i) for i, t in enumerate(texts) if len(tokenize(t)) <= max_words)
    return [texts[i] for _, i in short[:n]]


def demo(progress: bool = True):
    """NAOPC of three attribution methods on the demo sentiment model (the 6 shortest demo test texts).

    Texts of <= 10 words get exact limits (DP over all 2^N word subsets), longer ones the default beam;
    the report names any pair of methods whose ranking flips after normalization.
    """
    from textxai.classifier import as_classifier

    classifier = as_classifier("textxai/demo-sentiment")
    texts = _demo_texts()
    options = naopc.NAOPCOptions(normalization="auto", max_exact_words=10, progress=progress)
    results, figs = analyse(texts, None, classifier, {m: None for m in DEMO_METHODS}, options=options)
    return report(results, "NAOPC — demo sentiment model, three attribution methods"), results, figs
