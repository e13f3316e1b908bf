"""The ``textxai`` command: ``demo``, ``run``, ``list``, ``publish``.

    textxai demo --output demo-output
    textxai run naopc --model textxai/demo-sentiment --data reviews.csv --output out
    textxai list
    textxai compare a.json b.json --module inconsistency
    textxai audit --model textxai/demo-sentiment --data reviews.csv --label-column label --output audit
    textxai publish naopc --namespace my-org --dry-run space-folder
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from textxai import registry
from textxai.modules import list_modules

# Imported where used (``textxai --help`` and ``textxai list`` load no numpy, torch or method: a test counts
# the modules they import): textxai.cli_intervals, textxai.outputs, textxai.tables, textxai.validation.


def first_line(error) -> str:
    from textxai.loading import first_line as first

    return first(error)


def one_line(text, limit=None) -> str:
    from textxai.validation import one_line as line

    return line(text) if limit is None else line(text, limit)


def to_jsonable(results):
    from textxai.outputs import to_jsonable as convert

    return convert(results)


def load_table(*args):
    from textxai.tables import load_table as load  # the one data reader

    return load(*args)


def runner(name: str):
    """The CLI glue module of method ``name`` (its descriptor's ``runner``), or None when it has none."""
    return registry.get(name).runner_module()


def write_outputs(output: Path, stem: str, results: dict, figures: dict) -> list[Path]:
    """Write ``<stem>.json`` and one PNG per figure into ``output``, replacing the stem's old outputs together
    (:mod:`textxai.outputs`: an interrupted or failed write leaves the old ones); return the paths written."""
    from textxai.outputs import staged

    with staged(output, [stem]) as stage:
        written = stage.write(stem, to_jsonable(results), figures)
    return written


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
    for method in registry.methods():  # in the descriptors' order
        glue = method.runner_module()
        if glue is not None and hasattr(glue, "demo") and (not args.modules or method.name in args.modules):
            sections.append((method.name, glue.demo))
    summary = {}
    from textxai.outputs import staged

    with staged(output, [stem for stem, _ in sections] + ["index"]) as stage:  # replaced together at the end
        for stem, section in sections:
            print(f"\n[textxai demo] {stem} ...", file=sys.stderr, flush=True)
            report, results, figures = section(progress=not args.no_progress)
            print(report, flush=True)
            summary[stem] = [str(p) for p in stage.write(stem, to_jsonable(results), figures)]
        stage.write("index", summary)
    print(f"\nWrote {sum(len(v) for v in summary.values())} files to {output}/ in {time.time() - started:.0f} s")
    return 0


def check_output_folder(output: str) -> Path:
    """``--output`` as a writable folder (created), checked before any work so a long run is not lost."""
    import tempfile

    if not str(output).strip():
        raise ValueError(f"--output {output!r}: expected a folder for the results")
    path = Path(output)
    if path.exists() and not path.is_dir():
        raise ValueError(f"--output {output!r}: is a file; expected a folder for the results")
    try:
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError as error:
        raise ValueError(f"--output {output!r}: cannot write there ({first_line(error)}); choose a writable folder") from None
    return path


#: the library's names of what the common columns of --data become (a message about ``texts[3]`` names
#: --text-column); a method's own arguments are in its descriptor's ``flags``
COLUMN_FLAGS = {"texts": "--text-column", "text_pairs": "--pair-column", "labels": "--label-column"}


@contextmanager
def flags_named(args, method=None):
    """A library message about one of the run's options (``class_names=None: ...``) names its flag first
    (``--class-names: class_names=None: ...``): the user passed the flag, not the keyword. ``method``: its
    descriptor, whose ``flags`` name the flags of its own library arguments."""
    try:
        yield
    except (ValueError, TypeError) as error:
        message = str(error)
        name = re.match(r"[A-Za-z_]\w*", message)
        word = name.group(0) if name else ""
        flags = {**COLUMN_FLAGS, **(method.flags if method is not None else {})}
        flag = flags.get(word) or ("--" + word.replace("_", "-") if word in vars(args) else None)
        if type(error) in (ValueError, TypeError) and flag and message[name.end():name.end() + 1] in ("=", "[", ":", " "):
            raise type(error)(f"{flag}: {message}") from error
        raise


def cmd_run(args) -> int:
    from textxai.classifier import as_classifier

    from textxai import parallel

    method = registry.get(args.module)
    glue = method.runner_module()
    check_output_folder(args.output)
    mismatch = parallel.launch_mismatch()
    if mismatch:
        print(f"textxai run {args.module}: {mismatch}", file=sys.stderr, flush=True)
    if not parallel.takes_part(method.data_parallel):  # under accelerate, a method that does not split: main process
        return 0
    args.no_progress = getattr(args, "no_progress", False) or not parallel.is_main_process()
    texts, pairs, labels = load_table(args.data, args.text_column, args.pair_column, args.label_column, args.split, args.limit)
    classifier = as_classifier(args.model, device=args.device or parallel.device())
    if parallel.num_processes() > 1 and method.data_parallel:
        print(f"textxai run {args.module}: {parallel.share_note(len(texts))}", file=sys.stderr, flush=True)
    from textxai.batching import work_budget
    from textxai.estimates import check_evaluations, for_run

    what = f"textxai run {args.module}"
    if args.max_evaluations is not None:  # refused before any model call; the counting budget stays the backstop
        check_evaluations(for_run(args.module, args, texts, pairs, classifier), args.max_evaluations, what,
                          "use fewer or shorter texts (--limit) or lighter options")
    with work_budget(max_evaluations=args.max_evaluations, what=what), flags_named(args, method):
        results, figures = glue.run(args, texts, pairs, labels, classifier)
    if not parallel.is_main_process():  # every process holds the gathered results; the main process writes
        parallel.wait_for_everyone()
        return 0
    written = write_outputs(Path(args.output), args.module, results, figures)
    if method.data_parallel:
        parallel.wait_for_everyone()
    scalars = {k: v for k, v in to_jsonable(results).items() if isinstance(v, (int, float)) or v is None}
    from textxai.render import format_value

    for key, value in scalars.items():  # with its bootstrap interval (textxai.stats) when the runner made one
        interval = (results.get("intervals") or {}).get(key)
        print(f"{key}: {format_value(value, interval) if interval else value}")
    print(f"Wrote {', '.join(str(p) for p in written)}")
    return 0


def cmd_audit(args) -> int:
    from textxai import parallel
    from textxai.audit.cli import run

    check_output_folder(args.output)
    mismatch = parallel.launch_mismatch()
    if mismatch:
        print(f"textxai audit: {mismatch}", file=sys.stderr, flush=True)
    return run(args)


#: The built-in methods as ``textxai --help`` and ``textxai list`` show them without importing any (importing a
#: method imports torch: seconds): ``(name, kind, help)`` in the registry's order. A test holds it equal to the
#: registry; once anything has loaded the registry (a method registered at run time), the registry is read.
BUILTIN_METHODS = (
    ("inconsistency", "metric", "inc@n of a counterfactual editor: feed it its own edits and count how much larger "
                                "they get"),
    ("fim_difficulty", "measurement", "example difficulty: largest eigenvalue of the Fisher information metric of "
                                      "the input embeddings"),
    ("toki_trust", "metric", "TOKI: is each correct prediction made for the right reasons (words related to its "
                             "class)?"),
    ("naopc", "metric", "faithfulness of word attributions: AOPC comprehensiveness / sufficiency and Normalized AOPC"),
    ("ceval", "metric", "CEval metrics of counterfactual texts: flip rate, probability change, distance, diversity, "
                        "perplexity, quality"),
)


def method_listing() -> list[tuple[str, str, str, bool]]:
    """``(name, kind, help, present)`` of every method; ``present``: its module folder is in this installation."""
    if registry._DISCOVERED or registry._METHODS:
        present = set(list_modules())
        return [(m.name, m.kind, m.help, m.name in present) for m in registry.methods()]
    from textxai.modules import _roots

    return [(name, kind, text, any((root / f"{kind}s" / name / f"{name}.py").is_file() for root in _roots()))
            for name, kind, text in BUILTIN_METHODS]


def method_names() -> list[str]:
    return [name for name, *_ in method_listing()]


def cmd_list(args) -> int:
    for name, kind, text, present in method_listing():
        state = "available" if present else "not in this installation"
        print(f"{name:<16} {kind:<12} {state:<25} {text}".rstrip())
    return 0


def cmd_cache_modules(args) -> int:
    from textxai.modules import cache_modules

    names = list(args.names or [])
    known = method_names()
    for name in names:
        if name not in known:
            raise ValueError(f"cache-modules {name!r}: not a textxai module; expected some of {known} (none: all)")
    for script in cache_modules(names or None, namespace=args.namespace):
        print(f"{args.namespace}/{script.stem:<16} {script}")
    return 0


class ArgumentParser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit code 2): ``textxai run naopc: error: ... (see --help)``."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {one_line(message, 400)} (see {self.prog} --help)\n")


COMMANDS = {
    "demo": "run every available module on the embedded demo models and data",
    "run": "run one module on your model and data",
    "compare": "confidence intervals and paired comparisons of saved results (several methods / editors / models "
               "on the same examples)",
    "audit": "one report: is my classifier right for the right reasons? (all methods)",
    "list": "list the modules",
    "cache-modules": "make evaluate.load('textxai/<name>') work offline",
    "publish": "assemble (and upload) the Hub Space of a module",
}


def _command_of(argv) -> str | None:
    """The sub-command ``argv`` names (its first word that is no option), or None."""
    return next((a for a in argv if not a.startswith("-")), None) if argv is not None else None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The ``textxai`` parser. With ``argv``, only the sub-command it names is built in full (the others are
    named, with their help line): ``textxai --help`` and ``textxai list`` import no method, no torch."""
    parser = ArgumentParser(prog="textxai", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--debug", action="store_true", help="show the full traceback of an error (any position)")
    commands = parser.add_subparsers(dest="command", required=True)
    wanted = _command_of(argv)
    full = (lambda name: True) if argv is None else (lambda name: name == wanted)

    for name, text in COMMANDS.items():
        if full(name):
            _BUILDERS[name](commands, text)
        else:
            commands.add_parser(name, help=text)
    return parser


def _demo_parser(commands, text):
    demo = commands.add_parser("demo", help=text)
    demo.add_argument("--output", default="demo-output", help="folder for the JSON results and PNG plots")
    demo.add_argument("--modules", nargs="*", choices=method_names(), help="only these modules")
    demo.add_argument("--no-progress", action="store_true", help="hide progress bars")
    demo.set_defaults(func=cmd_demo)


def _run_parser(commands, text):
    from textxai.validation import positive_int_arg

    run = commands.add_parser("run", help=text)
    modules = run.add_subparsers(dest="module", required=True, metavar="MODULE")
    for method in registry.methods():
        glue = method.runner_module()
        if glue is None:
            continue
        sub = modules.add_parser(method.name, conflict_handler="resolve", help=method.help)
        sub.add_argument("--model", required=True, help="Hub id, local folder, or textxai/demo-sentiment | textxai/demo-topic")
        sub.add_argument("--data", required=True, help="csv / tsv / jsonl / parquet file, or a Hub dataset id")
        sub.add_argument("--text-column", default="text")
        sub.add_argument("--pair-column", default=None, help="second text of sentence pairs (NLI)")
        sub.add_argument("--label-column", default=None)
        sub.add_argument("--split", default="test", help="split of a Hub dataset")
        sub.add_argument("--limit", type=positive_int_arg, default=None, help="use only the first N rows")
        sub.add_argument("--device", default=None)
        sub.add_argument("--batch-size", type=positive_int_arg, default=32)
        sub.add_argument("--no-progress", action="store_true")
        sub.add_argument("--max-evaluations", type=positive_int_arg, default=None, metavar="N",
                         help="refuse (exit 2) a run estimated above N model evaluations before it starts, and stop (exit 1) "
                              "one that makes more (default: no limit)")
        sub.add_argument("--output", default="textxai-output")
        glue.add_arguments(sub)
        from textxai import cli_intervals

        cli_intervals.add_cli_arguments(sub)  # --confidence-level, --n-resamples, --sample-size-sweep
        sub.set_defaults(func=cmd_run)


def _compare_parser(commands, text):
    from textxai import cli_intervals

    cli_intervals.add_compare_parser(commands)  # textxai compare A.json B.json --module NAME


def _audit_parser(commands, text):
    from textxai.audit.cli import add_arguments as audit_arguments

    audit = commands.add_parser("audit", help=text)
    audit_arguments(audit)
    audit.set_defaults(func=cmd_audit)


def _list_parser(commands, text):
    commands.add_parser("list", help=text).set_defaults(func=cmd_list)


def _cache_parser(commands, text):
    caching = commands.add_parser("cache-modules", help=text)
    # no choices=: argparse checks an empty nargs="*" list against them ("invalid choice: []"); cmd_cache_modules does
    caching.add_argument("names", nargs="*", metavar="MODULE",
                         help=f"modules to cache (default: all of {method_names()})")
    caching.add_argument("--namespace", default="textxai", help="the Hub namespace of the name (default: textxai)")
    caching.set_defaults(func=cmd_cache_modules)


def _publish_parser(commands, text):
    try:
        from textxai import publish
    except ImportError:
        publish = None
    pub = commands.add_parser("publish", help=text)
    if publish is not None and hasattr(publish, "add_publish_arguments"):
        publish.add_publish_arguments(pub)
        pub.set_defaults(func=publish.main_publish)


_BUILDERS = {"demo": _demo_parser, "run": _run_parser, "compare": _compare_parser, "audit": _audit_parser,
             "list": _list_parser, "cache-modules": _cache_parser, "publish": _publish_parser}


def main(argv: list[str] | None = None, one_line_errors: bool | None = None) -> int:
    """Run the command; a user mistake is one line on stderr with exit code 2, a failure one line with 1.

    ``--debug`` (anywhere on the line) shows the traceback instead. ``one_line_errors`` defaults to True for
    the command line (``argv`` None) and False when called from Python with ``argv`` (errors are raised).
    """
    if one_line_errors is None:
        one_line_errors = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or not one_line_errors
    argv = [a for a in argv if a != "--debug"]
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    from textxai.progress import restore, third_party_bars_quiet

    quieted = third_party_bars_quiet()
    try:
        with one_line_warnings():
            return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("textxai: interrupted", file=sys.stderr)
        return 130
    except SystemExit as stop:
        if debug or not isinstance(stop.code, str):
            raise
        print(f"textxai: error: {one_line(stop.code, 600)}", file=sys.stderr)
        return 2
    except (ValueError, TypeError) as error:  # the library's messages for inputs it refuses
        if debug:
            raise
        print(f"textxai: error: {one_line(as_flags(str(error), parser), 600)}", file=sys.stderr)
        return 2
    except Exception as error:  # noqa: BLE001 - any other failure: one line, the traceback with --debug
        if debug:
            raise
        print(f"textxai: failed: {one_line(first_line(error), 600)} (rerun with --debug for the traceback)", file=sys.stderr)
        return 1
    finally:
        restore(quieted)


def option_strings(parser: argparse.ArgumentParser) -> set[str]:
    """Every ``--flag`` of ``parser`` and of its sub-commands."""
    found = set()
    for action in parser._actions:
        found.update(s for s in action.option_strings if s.startswith("--"))
        for sub in (getattr(action, "choices", None) or {}).values() if isinstance(action, argparse._SubParsersAction) else ():
            found |= option_strings(sub)
    return found


def as_flags(message: str, parser: argparse.ArgumentParser) -> str:
    """A library message names arguments as Python spells them (``model='x': ...``); on the command line the
    user typed ``--model x``, so each ``name=`` that is one of the command's flags is written as that flag.

    >>> p = ArgumentParser(prog="t"); _ = p.add_argument("--beam-size")
    >>> as_flags("beam_size=0: expected a positive integer; model='m' is fine", p)
    "--beam-size 0: expected a positive integer; model='m' is fine"
    """
    import re

    flags = option_strings(parser)

    def spell(match):   # a message that names the flag already (``--class-names: class_names=None``) stays
        flag = "--" + match.group(1).replace("_", "-")
        return f"{flag} " if flag in flags and flag not in message else match.group(0)

    return re.sub(r"(?<![\w.-])([a-z][a-z0-9_]*)=(?!=)", spell, message)


@contextmanager
def one_line_warnings():
    """Python warnings as one readable line each on stderr, each text once per command (not the file, line number
    and source line of the code that raised it, repeated from every call site)."""
    import warnings

    seen = set()

    def show(message, category, filename, lineno, file=None, line=None):
        text = f"textxai: warning: {one_line(str(message), 400)} ({category.__name__})"
        if text not in seen:
            seen.add(text)
            print(text, file=file or sys.stderr, flush=True)

    with warnings.catch_warnings():
        warnings.simplefilter("always")   # shown once by `seen`, whatever the call site
        warnings.showwarning = show
        yield


if __name__ == "__main__":
    sys.exit(main())
