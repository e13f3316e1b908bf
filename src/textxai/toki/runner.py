"""TOKI: is each correct prediction made for the right reasons (words related to its class)?

``textxai run toki_trust`` and the toki_trust section of ``textxai demo``: arguments -> option groups ->
:func:`textxai.toki.analyse` -> results, figures and the printed report. Builds (or loads) the keyword index of
the model from ``--train-data``, labels each correct prediction of ``--data`` trustworthy or not, compares with
the Naive and TOKI(-K.I) baselines (and with human labels from ``--human-trust-column``), and optionally runs
the TOKI-guided attack (``--attack N``). Every default is its option group's (``textxai.toki.OPTION_GROUPS``).
"""
from __future__ import annotations

import argparse
import sys

from textxai import parallel, toki
from textxai.attribution import REGISTRY, SamplingOptions
from textxai.embeddings import EMBEDDER_NAMES
from textxai.options import group_fields
from textxai.toki.core import LINKAGES
from textxai.validation import nonnegative_int_arg, number_in, positive_int_arg, unit_interval_arg

# name, help and data_parallel (the explanations of the training texts, then of the assessed texts, are split
# under accelerate / torchrun) are the descriptor's (textxai/toki/method.py)
TRAIN_LIMIT = 2000    # training rows read from --train-data (as the paper)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    explain, index, assess = toki.ExplainOptions(), toki.IndexOptions(), toki.AssessOptions()
    attack, output = toki.AttackOptions(), toki.OutputOptions()
    parser.add_argument("--train-data", default=None, help="training texts (same columns as --data) for the keyword index")
    parser.add_argument("--train-limit", type=positive_int_arg, default=TRAIN_LIMIT,
                        help=f"training rows used (default {TRAIN_LIMIT}, as the paper)")
    parser.add_argument("--keyword-index", default=None, metavar="FOLDER", help="a saved keyword index instead of --train-data")
    parser.add_argument("--save-index", default=None, metavar="FOLDER", help="save the keyword index built here")
    parser.add_argument("--explainer", default=explain.explainer, choices=toki.EXPLAINERS)
    samples = REGISTRY["lime"].default_samples
    parser.add_argument("--lime-samples", type=positive_int_arg, default=samples,
                        help=f"LIME samples (default {samples}, as the paper)")
    perturbation = group_fields(SamplingOptions)["perturbation"]
    parser.add_argument("--perturbation", default=perturbation, choices=["mask", "delete"],
                        help=f"how omission / LIME remove words (default {perturbation})")
    parser.add_argument("--top-k", type=positive_int_arg, default=explain.top_k)
    parser.add_argument("--theta-dist", type=unit_interval_arg, default=index.theta_dist)
    parser.add_argument("--theta-relate", type=number_in(-1.0, 1.0), default=index.theta_relate,
                        help="default: estimated per embedder")
    parser.add_argument("--linkage", default=index.linkage, choices=LINKAGES, help="of the keyword clusters")
    parser.add_argument("--theta-conf", type=unit_interval_arg, default=assess.theta_conf, help="Naive baseline threshold")
    parser.add_argument("--resolution", type=float, default=assess.resolution,
                        help="smallest top-k importance sum given a verdict (below: undetermined)")
    parser.add_argument("--embedders", nargs="+", default=index.embedders, choices=list(EMBEDDER_NAMES),
                        help="word embedders that vote (default: all; the classifier's own embeddings count once "
                             "when they are MiniLM's)")
    parser.add_argument("--class-names", nargs="+", default=index.class_names,
                        help="one description per class, anchor words joined by commas, e.g. 'negative,bad,poor' "
                             "'positive,good,great' (default: id2label, or the demo models' shipped anchors)")
    parser.add_argument("--human-trust-column", default=None, help="column of human trust labels (1 / 0 / empty)")
    parser.add_argument("--attack", type=nonnegative_int_arg, default=output.attack, metavar="N",
                        help="also attack the first N correct predictions")
    parser.add_argument("--max-rate", type=unit_interval_arg, default=attack.max_rate,
                        help=f"attack: maximum share of words changed (A2T: {attack.max_rate})")
    parser.add_argument("--min-similarity", type=number_in(-1.0, 1.0), default=attack.min_similarity,
                        help="attack: minimum MiniLM sentence cosine")


def _explainer_options(args) -> dict:
    options = {"n_samples": args.lime_samples} if args.explainer == "lime" else {}
    if args.explainer in ("lime", "omission", "kernel_shap"):
        options["perturbation"] = args.perturbation
    return options


def options(args, classifier) -> dict:
    """The option groups of :func:`textxai.toki.analyse` from the parsed arguments."""
    from textxai import cli_intervals

    names = None if args.class_names is None else [[w.strip() for w in v.split(",") if w.strip()] for v in args.class_names]
    attack = toki.AttackOptions(max_rate=args.max_rate, min_similarity=args.min_similarity)
    return {
        "explain": toki.ExplainOptions(args.explainer, _explainer_options(args), args.top_k, args.batch_size,
                                       progress=not getattr(args, "no_progress", False)),
        "index": toki.IndexOptions(args.theta_dist, args.theta_relate, args.embedders, names, args.linkage),
        "assess": toki.AssessOptions(args.theta_conf, args.resolution),
        "output": toki.OutputOptions(intervals=cli_intervals.cli_options(args), title=f"TOKI trust — {getattr(classifier, 'name', '')}",
                                     attack=args.attack, attack_options=attack),
    }


def _label_ids(labels, classifier, flag: str) -> list[int]:
    try:
        return toki.label_ids(labels, classifier, flag)
    except ValueError as error:
        raise SystemExit(str(error)) from None


def inputs(args, labels, classifier) -> dict:
    """The data arguments of :func:`textxai.toki.analyse`: true labels, human labels, keyword index or training data."""
    from textxai import tables

    if labels is None:
        raise SystemExit("--label-column: toki_trust needs the true labels of --data (it assesses correct predictions)")
    out = {"references": _label_ids(labels, classifier, "--label-column")}
    if args.human_trust_column:
        raw = tables.load_column(args.data, args.human_trust_column, "--human-trust-column", args.split, args.limit, "label")
        out["human_trust"] = [toki.human_trust_label(v, i, "--human-trust-column") for i, v in enumerate(raw)]
    if args.keyword_index:
        out["keyword_index"] = args.keyword_index
    elif args.train_data:
        train, pairs, train_labels = tables.load_table(args.train_data, args.text_column, args.pair_column,
                                                       args.label_column, "train", args.train_limit, "--train-data")
        if train_labels is None:
            raise SystemExit("--label-column: the training data needs labels too")
        out["train"] = toki.TrainingData(train, _label_ids(train_labels, classifier, "--train-data"), pairs, args.save_index)
    else:
        raise SystemExit("--train-data or --keyword-index: toki_trust needs one of them to know each class's keywords")
    return out


def run(args, texts, text_pairs, labels, classifier):
    """Keyword index from --train-data (or --keyword-index), trust labels of --data, optional attack."""
    with parallel.collective():  # every process runs this; toki's explanations are shared out
        analysis = toki.analyse(texts, text_pairs=text_pairs, model=classifier, **inputs(args, labels, classifier),
                                **options(args, classifier))
    parallel.note(f"toki_trust work of this process: {parallel.work_note()}")
    print(analysis.report)
    for warning in analysis.warnings:
        print(f"textxai run toki_trust: warning: {warning}", file=sys.stderr)
    return analysis.results, analysis.figures


def demo(progress: bool = True):
    """Keywords per class of both demo models, trust labels of 12 held-out texts each, one attack."""
    from textxai import render
    from textxai import demo as demo_data

    text, results, figures = [], {}, {}
    for kind in ("sentiment", "topic"):
        clf, index = toki.demo_index(kind, progress=progress)
        corpus = demo_data.load_corpus(kind)
        output = toki.OutputOptions(intervals=render.DEMO_OPTIONS, max_examples=4,
                                    title=f"TOKI trust — textxai/demo-{kind} (omission, 60 training texts)",
                                    attack=4 if kind == "sentiment" else 0, attack_options=toki.demo_attack_options())
        analysis = toki.analyse(corpus["test_texts"][:12], corpus["test_labels"][:12], model=clf, keyword_index=index,
                                explain=toki.ExplainOptions("omission"), output=output)
        text.append(analysis.report)
        results[kind] = {**analysis.results, "intervals": analysis.results.get("intervals", {})}
        figures.update({f"{name}_{kind}": figure for name, figure in analysis.figures.items()})
    return "\n".join(text), results, figures
