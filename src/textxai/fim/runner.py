"""``textxai run fim_difficulty`` and the fim_difficulty section of ``textxai demo``: argparse -> options ->
:func:`textxai.fim.analyse` -> written by :mod:`textxai.cli`."""
from __future__ import annotations

import argparse

from textxai import cli_intervals, parallel
from textxai.fim.analysis import ShowOptions, analyse
from textxai.fim.staged import FIMOptions
from textxai.validation import nonnegative_int_arg, number_in, positive_int_arg

_FIM, _SHOW = FIMOptions(), ShowOptions()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--batch-size", type=positive_int_arg, default=_FIM.batch_size,
                        help=f"texts per forward/backward batch (default {_FIM.batch_size})")
    parser.add_argument("--top", type=positive_int_arg, default=_SHOW.top,
                        help=f"hardest / easiest texts listed in the report (default {_SHOW.top})")
    parser.add_argument("--min-flip", action="store_true",
                        help="also search the smallest L2 move along the top eigenvector that flips the prediction")
    parser.add_argument("--max-strength", type=number_in(0.0, 1e6), default=_FIM.max_strength,
                        help=f"upper end of that search (default {_FIM.max_strength:g}, as the paper)")
    parser.add_argument("--tol", type=number_in(0.0, 1e6), default=_FIM.tol,
                        help=f"bracket width of the binary search (default {_FIM.tol:g})")
    parser.add_argument("--random-flips", action="store_true",
                        help="also replace --fraction of the words with random vocabulary words, --trials times")
    parser.add_argument("--fraction", type=number_in(0.0, 1.0), default=_FIM.fraction,
                        help=f"share of words replaced (default {_FIM.fraction:g})")
    parser.add_argument("--trials", type=positive_int_arg, default=_FIM.trials,
                        help=f"random substitutions per text (default {_FIM.trials})")
    parser.add_argument("--seed", type=nonnegative_int_arg, default=_FIM.seed,
                        help=f"seed of the random substitutions (default {_FIM.seed})")
    parser.add_argument("--shift-against", metavar="PATH", default=None,
                        help="perturbed texts row-aligned with --data (a csv / tsv / jsonl / json / parquet file with "
                             "the --text-column): report lambda_max(perturbed) - lambda_max(original) per pair")


def perturbed_texts(shift_against, text_column: str, limit, n: int):
    """The ``--shift-against`` texts (read by :func:`textxai.tables.load_column`), checked before any model call."""
    from textxai.tables import load_column

    if shift_against is None:
        return None
    perturbed = load_column(shift_against, text_column, "--shift-against --text-column", limit=limit,
                            data_flag="--shift-against")
    if len(perturbed) != n:
        raise ValueError(f"--shift-against has {len(perturbed)} texts but --data has {n}: "
                         "expected row-aligned files of the same length")
    return perturbed


def _sharded(fn):
    """Under accelerate: the texts of ``fn`` split across processes (the function itself in one process)."""
    return parallel.sharded(fn, over=("texts", "text_pairs"))


def options(args) -> FIMOptions:
    """The :class:`FIMOptions` of parsed ``textxai run fim_difficulty`` arguments."""
    return FIMOptions(batch_size=args.batch_size, min_flip=args.min_flip, max_strength=args.max_strength, tol=args.tol,
                      random_flips=args.random_flips, fraction=args.fraction, trials=args.trials, seed=args.seed,
                      progress=not getattr(args, "no_progress", False), shard=_sharded)


def run(args, texts, text_pairs, labels, classifier):
    """Difficulty of every text, the hardest and easiest ones, and the optional §4.3 / §4.4 experiments."""
    perturbed = perturbed_texts(args.shift_against, getattr(args, "text_column", "text") or "text",
                                getattr(args, "limit", None), len(texts))
    analysis = analyse(texts, classifier, text_pairs, labels=labels, perturbed=perturbed, options=options(args),
                       top=args.top, intervals=cli_intervals.cli_options(args))
    return analysis.results, analysis.figures


def _demo_corpus(name: str = "sentiment", split: str = "test"):
    """Texts and labels of a split of a packaged demo corpus."""
    from textxai import demo as _demo

    corpus = _demo.load_corpus(name)
    return list(corpus[f"{split}_texts"]), [int(x) for x in corpus[f"{split}_labels"]]


def demo(progress: bool = True):
    """Hardest and easiest demo-sentiment test texts with their most sensitive words; min flip strength."""
    from textxai.classifier import as_classifier

    texts, labels = _demo_corpus("sentiment", "test")
    analysis = analyse(texts, as_classifier("textxai/demo-sentiment"), labels=labels,
                       options=FIMOptions(min_flip=True, tol=1e-2, progress=progress, shard=_sharded),
                       top=3, title="FIM difficulty — demo sentiment model, demo test texts")
    return analysis.report, analysis.results, analysis.figures
