"""``textxai run toki_trust`` and the toki_trust section of ``textxai demo``.

Builds (or loads) the TOKI keyword index of the model from ``--train-data``, labels each correct
prediction of ``--data`` trustworthy or not, compares with the Naive and TOKI(-K.I) baselines (and with
human labels from ``--human-trust-column``), and optionally runs the TOKI-guided attack (``--attack N``).
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from textxai.validation import nonnegative_int_arg, number_in, positive_int_arg, unit_interval_arg
from textxai import cli_intervals, parallel, render, toki
from textxai.embeddings import EMBEDDER_NAMES

NAME = "toki_trust"
HELP = "TOKI: is each correct prediction made for the right reasons (words related to its class)?"
DATA_PARALLEL = True  # under accelerate / torchrun: the explanations (training texts, then assessed texts) are split


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--train-data", default=None, help="training texts (same columns as --data) for the keyword index")
    parser.add_argument("--train-limit", type=positive_int_arg, default=2000, help="training rows used (default 2000, as the paper)")
    parser.add_argument("--keyword-index", default=None, metavar="FOLDER", help="a saved keyword index instead of --train-data")
    parser.add_argument("--save-index", default=None, metavar="FOLDER", help="save the keyword index built here")
    parser.add_argument("--explainer", default="lime", choices=toki.EXPLAINERS)
    parser.add_argument("--lime-samples", type=positive_int_arg, default=5000, help="LIME samples (default 5000, as the paper)")
    parser.add_argument("--perturbation", default="mask", choices=["mask", "delete"],
                        help="how omission / LIME remove words (default mask)")
    parser.add_argument("--top-k", type=positive_int_arg, default=10)
    parser.add_argument("--theta-dist", type=unit_interval_arg, default=0.3)
    parser.add_argument("--theta-relate", type=number_in(-1.0, 1.0), default=None, help="default: estimated per embedder")
    parser.add_argument("--theta-conf", type=unit_interval_arg, default=0.9, help="Naive baseline threshold")
    parser.add_argument("--embedders", nargs="+", default=None, choices=list(EMBEDDER_NAMES),
                        help="word embedders that vote (default: all; the classifier's own embeddings count once "
                             "when they are MiniLM's)")
    parser.add_argument("--class-names", nargs="+", default=None,
                        help="one description per class, anchor words joined by commas, e.g. 'negative,bad,poor' "
                             "'positive,good,great' (default: id2label, or the demo models' shipped anchors)")
    parser.add_argument("--human-trust-column", default=None, help="column of human trust labels (1 / 0 / empty)")
    parser.add_argument("--attack", type=nonnegative_int_arg, default=0, metavar="N", help="also attack the first N correct predictions")
    parser.add_argument("--max-rate", type=unit_interval_arg, default=0.1, help="attack: maximum share of words changed (A2T: 0.1)")
    parser.add_argument("--min-similarity", type=number_in(-1.0, 1.0), default=0.8, help="attack: minimum MiniLM sentence cosine")


def _label_ids(labels, classifier, flag: str) -> list[int]:
    out = []
    for i, y in enumerate(labels):
        try:
            out.append(classifier.class_index(int(y) if isinstance(y, float) and y.is_integer() else y, f"{flag} row {i}"))
        except ValueError as error:
            raise SystemExit(str(error)) from None
    return out


def _trust_label(value, row: int):
    """A human trust label of --human-trust-column: 1 / 0 (true / false), empty for none."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool) or value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("1", "true", "0", "false"):
        return text in ("1", "true")
    raise ValueError(f"--human-trust-column: row {row + 1} holds {value!r}; expected 1 (trustworthy), 0 or empty")


def _class_names(values):
    return None if values is None else [[w.strip() for w in v.split(",") if w.strip()] for v in values]


def _options(args) -> dict:
    options = {"n_samples": args.lime_samples} if args.explainer == "lime" else {}
    if args.explainer in ("lime", "omission", "kernel_shap"):
        options["perturbation"] = args.perturbation
    return options


def _explain(args, progress: bool) -> toki.ExplainOptions:
    return toki.ExplainOptions(args.explainer, _options(args), args.top_k, args.batch_size, progress=progress)


def rate_figure(results: dict, class_names: dict[int, str], labels) -> object:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.2))
    classes = sorted(class_names)
    width = 0.27
    for j, (key, name) in enumerate((("label", "TOKI"), ("naive", "Naive"), ("no_ki", "TOKI(-K.I)"))):
        rates = []
        for c in classes:
            vals = [e[key] for e, y in zip(results["examples"], labels) if e["label"] is not None and y == c]
            rates.append(np.mean(vals) if vals else 0.0)
        ax.bar(np.arange(len(classes)) + (j - 1) * width, rates, width, label=name)
    ax.set_xticks(np.arange(len(classes)), [class_names[c] for c in classes])
    ax.set_ylim(0, 1)
    ax.set_ylabel("trustworthy share of correct predictions")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def with_intervals(results: dict, options=cli_intervals.DEMO_OPTIONS, figures: dict | None = None) -> dict:
    """``results["intervals"]`` of :func:`toki.assess`'s rates, resampling the correct predictions."""
    ex = results["examples"]
    shaped = {"trust_labels": [e["label"] for e in ex], "naive_labels": [e["naive"] for e in ex],
              "no_ki_labels": [e["no_ki"] for e in ex], "trustworthy_rate": results["trustworthy_rate"],
              **results["baselines"]}
    ivs = cli_intervals.runner_intervals("toki_trust", shaped, options, figures)
    if ivs:
        results["intervals"] = ivs
    if "sample_size_sweep" in shaped:
        results["sample_size_sweep"] = shaped["sample_size_sweep"]
    return results


def report(index: toki.KeywordIndex, results: dict, texts, title: str, max_examples: int = 6, attack=None) -> str:
    lines = [f"## {title}", ""]
    lines.append("theta_relate: " + ", ".join(f"{k} {v:.3f}" for k, v in index.theta_relate.items())
                 + f"; theta_dist {index.theta_dist}; explainer {index.explainer}")
    for c in sorted(index.class_names):
        kw = index.keyword_list(c)
        lines.append(f"  keywords of {index.class_names[c]!r} ({len(kw)} of {len(index.pools[c])} pool words): "
                     + ", ".join(kw[:15]) + (" …" if len(kw) > 15 else ""))
    lines.append("")
    undetermined = results.get("n_undetermined", 0)
    ivs = results.get("intervals") or {}
    rate = lambda key, value: render.format_value(value, ivs.get(key))  # noqa: E731
    lines.append(f"{results['n_correct']} correct predictions"
                 + (f", {undetermined} undetermined (attributions below the resolution: no verdict)" if undetermined else "")
                 + f". Trustworthy: TOKI {rate('trustworthy_rate', results['trustworthy_rate'])}, Naive "
                 f"{rate('naive_trustworthy_rate', results['baselines']['naive_trustworthy_rate'])}, TOKI(-K.I) "
                 f"{rate('no_ki_trustworthy_rate', results['baselines']['no_ki_trustworthy_rate'])}")
    if ivs:
        lines.append(render.interval_note(ivs))
    for name, m in results.get("evaluation", {}).items():
        lines.append(f"  vs human labels, {name:>10}: " + "  ".join(f"{k} {v:.3f}" for k, v in m.items() if k != "n")
                     + f"  (n={m['n']})")
    lines.append("")
    shown = 0
    for text, e in zip(texts, results["examples"]):
        if e.get("reason") == "wrong prediction" or e["is_rel"] is None or shown >= max_examples:
            continue
        shown += 1
        words = " ".join(f"[{w}]" if r else w for w, _, r in e["top_words"][:6])
        verdict = "undetermined" if e["label"] is None else "trustworthy" if e["label"] else "UNTRUSTWORTHY"
        lines.append(f"  {verdict:>13} IS_rel {e['is_rel']:.3f} IS_unr {e['is_unr']:.3f} | top words ([related]): {words}")
        lines.append(f"  {'':>13} {text[:100]}")
    if attack is not None:
        lines.append("")
        lines.append(f"TOKI-guided attack on {attack['n_attacked']} texts: success rate {attack['attack_success_rate']:.2f}, "
                     f"avg perturbations {attack['avg_perturbations']:.2f}, avg similarity {attack['avg_similarity']:.3f}")
        shown = sorted((r for r in attack["examples"] if r.success), key=lambda r: -r.similarity)[:3]
        if shown:
            lines.append("Successful attacks, most similar first (sentence cosine; read them: a substitute can change "
                         "the meaning):")
        for r in shown:
            lines.append(f"  {r.original}")
            lines.append(f"  -> {r.adversarial}   ({', '.join(f'{a}->{b}' for a, b in r.substitutions)}; "
                         f"similarity {r.similarity:.3f})")
    return "\n".join(lines).rstrip() + "\n"


def run(args, texts, text_pairs, labels, classifier):
    """Keyword index from --train-data (or --keyword-index), trust labels of --data, optional attack."""
    with parallel.collective():  # every process runs this; toki's explanations are shared out
        out, figures = _run(args, texts, text_pairs, labels, classifier)
    parallel.note(f"toki_trust work of this process: {parallel.work_note()}")
    return out, figures


def _run(args, texts, text_pairs, labels, classifier):
    from textxai import tables

    progress = not getattr(args, "no_progress", False)
    if labels is None:
        raise SystemExit("--label-column: toki_trust needs the true labels of --data (it assesses correct predictions)")
    labels = _label_ids(labels, classifier, "--label-column")
    human = None
    if args.human_trust_column:
        raw = tables.load_column(args.data, args.human_trust_column, "--human-trust-column", args.split, args.limit, "label")
        human = [_trust_label(v, i) for i, v in enumerate(raw)]
    if args.keyword_index:
        index = toki.check_index(args.keyword_index, classifier)
    elif args.train_data:
        train, train_pairs, train_labels = tables.load_table(args.train_data, args.text_column, args.pair_column,
                                                             args.label_column, "train", args.train_limit, "--train-data")
        if train_labels is None:
            raise SystemExit("--label-column: the training data needs labels too")
        index = toki.build_keyword_index(classifier, train, _label_ids(train_labels, classifier, "--train-data"), train_pairs,
                                         explain=_explain(args, progress),
                                         index=toki.IndexOptions(args.theta_dist, args.theta_relate, args.embedders,
                                                                 _class_names(args.class_names)))
        if args.save_index and parallel.is_main_process():
            index.save(args.save_index)
    else:
        raise SystemExit("--train-data or --keyword-index: toki_trust needs one of them to know each class's keywords")
    results = toki.assess(classifier, texts, labels, index, human_trust=human, text_pairs=text_pairs,
                          embedders=args.embedders, explain=_explain(args, progress),
                          options=toki.AssessOptions(theta_conf=args.theta_conf))
    figures = {"trust_rates": rate_figure(results, index.class_names, labels)}
    with_intervals(results, cli_intervals.cli_options(args), figures)
    attack = None
    if args.attack > 0 and text_pairs is None:
        parallel.note("the TOKI attack is not split: every process runs it on all chosen texts")
        chosen = [i for i, e in enumerate(results["examples"]) if e["label"] is not None][: args.attack]
        attack = toki.toki_attack(classifier, [texts[i] for i in chosen], index, labels=[labels[i] for i in chosen],
                                  embedders=args.embedders, max_rate=args.max_rate, min_similarity=args.min_similarity,
                                  batch_size=args.batch_size, progress=progress)
    print(report(index, results, texts, f"TOKI trust — {getattr(classifier, 'name', '')}", attack=attack))
    out = {"trustworthy_rate": results["trustworthy_rate"], "n_correct": results["n_correct"],
           **results["baselines"], "keywords": {index.class_names[c]: index.keyword_list(c) for c in index.class_names},
           "theta_relate": index.theta_relate, "examples": results["examples"]}
    if "evaluation" in results:
        out["evaluation"] = results["evaluation"]
    for key in ("intervals", "sample_size_sweep"):
        if key in results:
            out[key] = results[key]
    if attack is not None:
        out["attack"] = {k: v for k, v in attack.items() if k != "examples"}
        out["attack"]["examples"] = [r.__dict__ for r in attack["examples"]]
    return out, figures


def _demo_rows(kind: str):
    path = Path(__file__).resolve().parents[1] / "demo" / "data" / f"{kind}.jsonl"
    from textxai.tables import read_json_rows

    rows = read_json_rows(path, lines=True, name="the packaged demo corpus")
    return [r for r in rows if r.get("split") == "train"], [r for r in rows if r.get("split") == "test"]


def demo_index(kind: str, n_train: int = 60, progress: bool = False):
    """The keyword index of a demo model (omission explanations of ``n_train`` training texts; cached)."""
    from textxai.classifier import as_classifier

    clf = as_classifier(f"textxai/demo-{kind}")
    train, _ = _demo_rows(kind)
    train = train[:n_train]
    # the same options as the Space's default (omission, every embedder): one cached index for both
    index = toki.cached_keyword_index(clf, [r["text"] for r in train], [int(r["label"]) for r in train],
                                      explain=toki.ExplainOptions("omission", progress=progress),
                                      index=toki.IndexOptions(embedders=list(EMBEDDER_NAMES)))
    return clf, index


def demo(progress: bool = True):
    """Keywords per class of both demo models, trust labels of demo predictions, one attack."""
    text, results, figures = [], {}, {}
    for kind in ("sentiment", "topic"):
        clf, index = demo_index(kind, progress=progress)
        _, test = _demo_rows(kind)
        test = test[:12]
        texts, labels = [r["text"] for r in test], [int(r["label"]) for r in test]
        shown = {}
        res = with_intervals(toki.assess(clf, texts, labels, index, progress=False), figures=shown)
        if "intervals" in shown:
            figures[f"intervals_{kind}"] = shown["intervals"]
        attack = None
        if kind == "sentiment":
            chosen = [i for i, e in enumerate(res["examples"]) if e["label"] is not None][:4]
            attack = toki.toki_attack(clf, [texts[i] for i in chosen], index, labels=[labels[i] for i in chosen],
                                      max_rate=0.2, min_similarity=0.7)
        text.append(report(index, res, texts, f"TOKI trust — textxai/demo-{kind} (omission, 60 training texts)",
                           max_examples=4, attack=attack))
        results[kind] = {"keywords": {index.class_names[c]: index.keyword_list(c) for c in index.class_names},
                         "theta_relate": index.theta_relate, "trustworthy_rate": res["trustworthy_rate"],
                         **res["baselines"], "examples": res["examples"], "intervals": res.get("intervals", {})}
        if attack is not None:
            results[kind]["attack"] = {k: v for k, v in attack.items() if k != "examples"}
            results[kind]["attack"]["examples"] = [r.__dict__ for r in attack["examples"]]
        figures[f"trust_rates_{kind}"] = rate_figure(res, index.class_names, labels)
    return "\n".join(text), results, figures
