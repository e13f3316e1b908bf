"""``textxai run naopc`` and the naopc section of ``textxai demo``: AOPC and Normalized AOPC of attribution methods.

The command-line glue only: argparse -> :class:`textxai.naopc.NAOPCOptions` -> :func:`textxai.naopc.analyse`
-> the results and figures ``textxai run`` writes (the defaults of the flags are the option group's).
"""
from __future__ import annotations

import argparse
import sys

from textxai import cli_intervals, parallel, render
from textxai.attribution import available_methods
from textxai.naopc.analysis import analyse
from textxai.naopc.texts import NORMALIZATIONS, PERTURBATIONS, NAOPCOptions
from textxai.validation import int_in, nonnegative_int_arg, positive_int_arg, short_repr

DEMO_METHODS = ("omission", "input_x_gradient", "integrated_gradients")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = NAOPCOptions()
    parser.add_argument("--attribution-methods", nargs="+", default=["integrated_gradients"],
                        choices=list(available_methods()), metavar="METHOD",
                        help="attribution methods to compare: " + ", ".join(available_methods())
                             + "; default integrated_gradients")
    parser.add_argument("--attributions-column", default=None,
                        help="column of --data holding one list of word scores per row (instead of computing them)")
    parser.add_argument("--normalization", default=defaults.normalization, choices=list(NORMALIZATIONS),
                        help="limits: exact (DP over word subsets), beam (lazy beam), beam-paper (the paper's Algorithm 1), "
                             f"auto (exact when N <= --max-exact-words), none; default {defaults.normalization}")
    parser.add_argument("--beam-size", type=positive_int_arg, default=defaults.beam_size,
                        help="beam width of the beam limits (default 1 for beam, 5 for beam-paper)")
    parser.add_argument("--max-exact-words", type=int_in(1, 64), default=defaults.max_exact_words,
                        help="largest N for exact limits: 2^N model calls per text (default 12 on CPU, 16 on CUDA)")
    parser.add_argument("--perturbation", default=defaults.perturbation, choices=list(PERTURBATIONS))
    parser.add_argument("--target", default="predicted", help="'predicted' (default) or a class index")
    parser.add_argument("--seed", type=nonnegative_int_arg, default=defaults.seed,
                        help=f"seed of lime / kernel_shap (default {defaults.seed})")
    parser.add_argument("--curve-texts", type=positive_int_arg, default=1,
                        help="plot the perturbation curves of the first N texts (default 1: curves_first_text.png; "
                             "more: curves.png, one panel per text)")


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


def options(args) -> NAOPCOptions:
    """The :class:`NAOPCOptions` of parsed ``textxai run naopc`` arguments."""
    return NAOPCOptions(normalization=args.normalization, beam_size=args.beam_size,
                        max_exact_words=args.max_exact_words, perturbation=args.perturbation,
                        batch_size=args.batch_size, seed=args.seed, progress=not getattr(args, "no_progress", False))


def run(args, texts, text_pairs, labels, classifier):
    """AOPC / NAOPC of each attribution method (or of the attributions in --attributions-column)."""
    if args.attributions_column is not None:
        attributions = {args.attributions_column: _read_attributions(args)}
    else:
        attributions = {m: None for m in args.attribution_methods}
    analysis = analyse(texts, classifier, attributions, text_pairs, _target(args.target), options=options(args),
                       intervals=cli_intervals.cli_options(args), figures=getattr(args, "curve_texts", 1))
    if parallel.is_main_process():  # which limits "auto" chose, and the warnings (the summary prints numbers only)
        for warning in analysis.warnings:
            print(f"textxai run naopc: {warning}", file=sys.stderr, flush=True)
    results = analysis.results
    for name, m in results["methods"].items():  # flat scalars for the command line summary
        for key, value in m.items():
            results[f"{name}/{key}"] = value
    return results, analysis.figures


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
    analysis = analyse(_demo_texts(), classifier, {m: None for m in DEMO_METHODS},
                       options=NAOPCOptions(normalization="auto", max_exact_words=10, progress=progress),
                       intervals=render.DEMO_OPTIONS,
                       title="NAOPC — demo sentiment model, three attribution methods")
    return analysis.report, analysis.results, analysis.figures
