"""``textxai audit``: the command line of :func:`textxai.audit.audit`.

    textxai audit --model textxai/demo-sentiment --data reviews.csv --text-column text --label-column label \\
        --output audit [--compare other-model] [--config audit.yaml] [--faithfulness.methods omission gradient]

Writes ``DIR/index.html`` (the report), ``DIR/audit.json`` and ``DIR/per_text.csv`` (one row per text); finished stages are cached in
``DIR/.audit-cache`` so that rerunning an interrupted audit resumes it. Each stage option is a flag
``--<stage>.<option>`` (``textxai audit --help`` lists them) or an entry of the ``--config`` file (YAML or JSON,
``faithfulness: {methods: [omission, gradient]}``); flags win over the file.

Under a multi-process launcher every stage's per-text work is shared out and the main process writes the report:

    accelerate launch --multi_gpu --num_processes 2 -m textxai audit --model M --data D --output audit

(difficulty, flip strengths, NAOPC, TOKI's explanations, the editors' calls and the shortcut edits are split;
TOKI's attack runs on the main process alone: its random stream and candidate cache run across the texts.)
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from textxai.audit.options import PROFILES, SECTIONS, audit_options, flag_names, read_config
from textxai.validation import positive_int_arg


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="Hub id, local folder, or textxai/demo-sentiment | textxai/demo-topic")
    parser.add_argument("--data", required=True, help="csv / tsv / jsonl / parquet file, or a Hub dataset id")
    parser.add_argument("--text-column", default="text")
    parser.add_argument("--label-column", default=None, help="gold labels (accuracy, calibration, TOKI's correct predictions)")
    parser.add_argument("--compare", default=None, metavar="MODEL", help="a second model audited on the same texts")
    parser.add_argument("--train-data", default=None, help="training texts (same columns) for TOKI's keyword index")
    parser.add_argument("--split", default="test", help="split of a Hub dataset")
    parser.add_argument("--limit", type=positive_int_arg, default=None, help="use only the first N rows")
    parser.add_argument("--device", default=None)
    parser.add_argument("--output", default="audit", help="folder for index.html, audit.json and the stage cache")
    parser.add_argument("--config", default=None, help="YAML or JSON file of stage options (flags win over it)")
    parser.add_argument("--profile", default=None, choices=list(PROFILES),
                        help="preset stage options beneath --config and the flags: full (default, every method's "
                             "defaults) or quick (the same methods on fewer texts: TOKI on the first 100 texts, its "
                             "keyword index from at most 100, NAOPC and the editors on 10)")
    parser.add_argument("--sections", nargs="+", default=None, choices=SECTIONS, help="only these sections")
    parser.add_argument("--max-evaluations", type=positive_int_arg, default=None, metavar="N",
                        help="refuse (exit 2) an audit estimated above N model evaluations, before it starts")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    group = parser.add_argument_group("stage options (--<stage>.<option>; defaults in brackets)")
    for stage, name, default in flag_names():
        many = isinstance(default, tuple) or name == "class_names"
        group.add_argument(f"--{stage}.{name}", dest=f"{stage}.{name}", default=None, nargs="+" if many else None,
                           metavar=name.upper(), help=f"[{' '.join(map(str, default)) if many and default else default}]")


def options_from(args) -> dict:
    """The audit's options: the --config file, then every --stage.option flag given."""
    config = read_config(args.config) if args.config else {}
    for stage, name, _ in flag_names():
        value = getattr(args, f"{stage}.{name}", None)
        if value is not None:
            config.setdefault(stage, {})[name] = value
    if args.sections:
        config["sections"] = args.sections
    if args.profile:
        config["profile"] = args.profile
    run = dict(config.get("run") or {})   # a flag given wins over the file; a flag not given leaves the file's value
    if args.no_progress:
        run["progress"] = False
    if args.max_evaluations is not None:
        run["max_evaluations"] = args.max_evaluations
    config["run"] = run
    return config


def _train(args, config: dict) -> None:
    from textxai.tables import load_table

    if args.train_data:
        texts, _, labels = load_table(args.train_data, args.text_column, None, args.label_column, "train", None,
                                     data_flag="--train-data")
        if labels is None:
            raise ValueError(f"--train-data {args.train_data!r}: needs the label column (--label-column) too")
        config.setdefault("trust", {}).update(train_texts=texts, train_labels=labels)


def run(args) -> int:
    """Read the data, audit, write the report and the JSON, print the summary."""
    from textxai.audit.run import audit
    from textxai.tables import load_table

    config = options_from(args)
    audit_options(config)   # every option checked before the data is read or a model loaded
    _train(args, config)
    texts, _, labels = load_table(args.data, args.text_column, None, args.label_column, args.split, args.limit)
    model, compare = args.model, args.compare
    if args.device:
        from textxai.classifier import as_classifier

        model = as_classifier(model, device=args.device)
        compare = None if compare is None else as_classifier(compare, device=args.device)
    from textxai import parallel
    from textxai.outputs import staged

    if parallel.num_processes() > 1:
        config["run"]["progress"] = config["run"]["progress"] and parallel.is_main_process()
        print(f"textxai audit: {parallel.share_note(len(texts))} of every stage", file=sys.stderr, flush=True)
    result = audit(model, texts, labels, compare=compare, options=config, output=args.output)
    if not parallel.is_main_process():  # every process holds the whole audit; the main process writes it
        parallel.wait_for_everyone()
        return 0
    out = Path(args.output)
    with staged(out, ["index", "audit", "per_text"]) as stage:  # replaced together: an interrupted write leaves the old
        stage.write_text("index.html", result.to_html())
        stage.write_text("audit.json", result.to_json())
        stage.write_text("per_text.csv", result.to_csv())
    parallel.wait_for_everyone()
    print(result.summary)
    print(f"Wrote {out / 'index.html'}, {out / 'audit.json'} and {out / 'per_text.csv'}", file=sys.stderr)
    return 0
