"""The ``textxai`` command: ``demo``, ``run``, ``list``, ``publish``.

    textxai demo --output demo-output
    textxai run naopc --model textxai/demo-sentiment --data reviews.csv --output out
    textxai list
    textxai publish naopc --namespace my-org --dry-run space-folder
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path

import numpy as np

from textxai.modules import MODULE_NAMES, list_modules


def runner(name: str):
    """The CLI glue module of ``name`` (``textxai.runners.<name>``), or None when it is not there yet."""
    try:
        return importlib.import_module(f"textxai.runners.{name}")
    except ModuleNotFoundError as error:
        if error.name == f"textxai.runners.{name}":
            return None
        raise


def to_jsonable(value):
    """Plain JSON values from numpy scalars/arrays, tuples and nested containers (NaN -> None)."""
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def write_outputs(output: Path, stem: str, results: dict, figures: dict) -> list[Path]:
    """Write ``<stem>.json`` and one PNG per figure into ``output``; return the paths written."""
    output.mkdir(parents=True, exist_ok=True)
    written = [output / f"{stem}.json"]
    written[0].write_text(json.dumps(to_jsonable(results), indent=2))
    for name, figure in (figures or {}).items():
        path = output / f"{stem}_{name}.png"
        figure.savefig(path, dpi=110, bbox_inches="tight")
        written.append(path)
        import matplotlib.pyplot as plt

        plt.close(figure)
    return written


def load_table(data: str, text_column: str, pair_column: str | None, label_column: str | None, split: str,
               limit: int | None):
    """Texts, pairs and labels from a local csv / jsonl / json / parquet / tsv file or a Hub dataset id."""
    import datasets

    path = Path(data)
    builders = {".csv": "csv", ".tsv": "csv", ".jsonl": "json", ".json": "json", ".parquet": "parquet"}
    if path.exists():
        builder = builders.get(path.suffix.lower())
        if builder is None:
            raise SystemExit(f"--data {data!r}: unsupported file type {path.suffix!r}; expected one of {sorted(builders)}")
        kwargs = {"delimiter": "\t"} if path.suffix.lower() == ".tsv" else {}
        table = datasets.load_dataset(builder, data_files=str(path), split="train", **kwargs)
    else:
        try:
            table = datasets.load_dataset(data, split=split)
        except Exception as error:  # noqa: BLE001 - any loading failure becomes one clear message
            raise SystemExit(f"--data {data!r}: no such file, and it could not be loaded as a Hub dataset "
                             f"(split {split!r}): {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}")
    for flag, column in (("--text-column", text_column), ("--pair-column", pair_column), ("--label-column", label_column)):
        if column is not None and column not in table.column_names:
            raise SystemExit(f"{flag} {column!r}: no such column in {data!r}; columns: {table.column_names}")
    if limit is not None:
        table = table.select(range(min(limit, len(table))))
    texts = ["" if t is None else str(t) for t in table[text_column]]
    pairs = None if pair_column is None else ["" if t is None else str(t) for t in table[pair_column]]
    labels = None if label_column is None else list(table[label_column])
    return texts, pairs, labels


def demo_models_section(progress: bool) -> tuple[str, dict, dict]:
    """Predictions and held-out accuracy of the embedded demo models."""
    from textxai import demo
    from textxai.classifier import as_classifier

    lines, results = ["== Demo models (MiniLM encoder, heads fitted on the packaged corpora) =="], {}
    for kind in ("sentiment", "topic"):
        clf = as_classifier(f"textxai/demo-{kind}")
        accuracy = demo.heldout_accuracy(kind, clf)
        texts = demo.demo_texts(kind, 3)
        probs = clf.predict_proba(texts)
        lines.append(f"textxai/demo-{kind}: held-out accuracy {accuracy:.3f}")
        for text, p in zip(texts, probs):
            lines.append(f"  {clf.labels[int(p.argmax())]:>9} ({p.max():.2f})  {text}")
        results[kind] = {"heldout_accuracy": accuracy,
                         "examples": [{"text": t, "label": clf.labels[int(p.argmax())], "probabilities": p} for t, p in zip(texts, probs)]}
    return "\n".join(lines), results, {}


def cmd_demo(args) -> int:
    output = Path(args.output)
    started = time.time()
    sections = [("models", demo_models_section)]
    for name in MODULE_NAMES:
        glue = runner(name)
        if glue is not None and hasattr(glue, "demo") and (not args.modules or name in args.modules):
            sections.append((name, glue.demo))
    summary = {}
    for stem, section in sections:
        print(f"\n[textxai demo] {stem} ...", file=sys.stderr, flush=True)
        report, results, figures = section(progress=not args.no_progress)
        print(report, flush=True)
        written = write_outputs(output, stem, results, figures)
        summary[stem] = [str(p) for p in written]
    (output / "index.json").write_text(json.dumps(summary, indent=2))
    print(f"\nWrote {sum(len(v) for v in summary.values())} files to {output}/ in {time.time() - started:.0f} s")
    return 0


def cmd_run(args) -> int:
    from textxai.classifier import as_classifier

    glue = runner(args.module)
    texts, pairs, labels = load_table(args.data, args.text_column, args.pair_column, args.label_column, args.split, args.limit)
    try:
        classifier = as_classifier(args.model, device=args.device)
    except (ValueError, TypeError) as error:
        raise SystemExit(f"--model: {error}") from error
    results, figures = glue.run(args, texts, pairs, labels, classifier)
    written = write_outputs(Path(args.output), args.module, results, figures)
    scalars = {k: v for k, v in to_jsonable(results).items() if isinstance(v, (int, float)) or v is None}
    for key, value in scalars.items():
        print(f"{key}: {value}")
    print(f"Wrote {', '.join(str(p) for p in written)}")
    return 0


def cmd_list(args) -> int:
    present = set(list_modules())
    for name, kind in MODULE_NAMES.items():
        state = "available" if name in present else "not in this installation"
        print(f"{name:<16} {kind[:-1]:<12} {state}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="textxai", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="run every available module on the embedded demo models and data")
    demo.add_argument("--output", default="demo-output", help="folder for the JSON results and PNG plots")
    demo.add_argument("--modules", nargs="*", choices=sorted(MODULE_NAMES), help="only these modules")
    demo.add_argument("--no-progress", action="store_true", help="hide progress bars")
    demo.set_defaults(func=cmd_demo)

    run = commands.add_parser("run", help="run one module on your model and data")
    modules = run.add_subparsers(dest="module", required=True, metavar="MODULE")
    for name in MODULE_NAMES:
        glue = runner(name)
        if glue is None:
            continue
        sub = modules.add_parser(name, conflict_handler="resolve", help=(glue.__doc__ or "").strip().splitlines()[0] if glue.__doc__ else None)
        sub.add_argument("--model", required=True, help="Hub id, local folder, or textxai/demo-sentiment | textxai/demo-topic")
        sub.add_argument("--data", required=True, help="csv / tsv / jsonl / parquet file, or a Hub dataset id")
        sub.add_argument("--text-column", default="text")
        sub.add_argument("--pair-column", default=None, help="second text of sentence pairs (NLI)")
        sub.add_argument("--label-column", default=None)
        sub.add_argument("--split", default="test", help="split of a Hub dataset")
        sub.add_argument("--limit", type=int, default=None, help="use only the first N rows")
        sub.add_argument("--device", default=None)
        sub.add_argument("--batch-size", type=int, default=32)
        sub.add_argument("--no-progress", action="store_true")
        sub.add_argument("--output", default="textxai-output")
        glue.add_arguments(sub)
        sub.set_defaults(func=cmd_run)

    listing = commands.add_parser("list", help="list the modules")
    listing.set_defaults(func=cmd_list)

    try:
        from textxai import publish
    except ImportError:
        publish = None
    if publish is not None and hasattr(publish, "add_publish_arguments"):
        pub = commands.add_parser("publish", help="assemble (and upload) the Hub Space of a module")
        publish.add_publish_arguments(pub)
        pub.set_defaults(func=publish.main_publish)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
