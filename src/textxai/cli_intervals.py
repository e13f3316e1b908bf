"""The intervals of the ``textxai`` command: the options of ``textxai run`` and the ``textxai compare`` command.

The numbers come from :mod:`textxai.stats` (with the defaults of :class:`textxai.stats.IntervalOptions`),
their text and figures from :mod:`textxai.render`.

>>> import argparse; parser = argparse.ArgumentParser(); add_cli_arguments(parser)
>>> cli_options(parser.parse_args(["--confidence-level", "0.9"]))["confidence_level"]
0.9
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from textxai import stats
from textxai.render import compare_table, intervals_table, plot_intervals
from textxai.stats import SWEEP_SIZES, IntervalOptions
from textxai.validation import check_positive_int

__all__ = ["add_cli_arguments", "cli_options", "compare_files", "add_compare_parser"]

# ---------------------------------------------------------------------------------------------- textxai run

def add_cli_arguments(parser) -> None:
    """``--confidence-level``, ``--n-resamples``, ``--sample-size-sweep``, ``--sweep-sizes`` of ``textxai run``."""
    default = IntervalOptions()
    group = parser.add_argument_group("confidence intervals (textxai.stats)")
    group.add_argument("--confidence-level", type=float, default=default.confidence_level,
                       help=f"level of the bootstrap intervals printed with every number (default "
                            f"{default.confidence_level}; 0 = none)")
    group.add_argument("--n-resamples", type=int, default=default.n_resamples,
                       help=f"bootstrap resamples (default {default.n_resamples})")
    group.add_argument("--sample-size-sweep", action="store_true",
                       help="also plot the interval width against the number of examples (--sweep-sizes)")
    group.add_argument("--sweep-sizes", type=int, nargs="+", default=list(SWEEP_SIZES),
                       help="sample sizes of the sweep (default 10 50 100 200, as the inconsistency paper)")


def cli_options(args) -> dict:
    """The interval options of parsed ``textxai run`` arguments (defaults when the CLI did not add them)."""
    default = IntervalOptions()
    level = getattr(args, "confidence_level", default.confidence_level)
    n_resamples = check_positive_int(getattr(args, "n_resamples", default.n_resamples), "--n-resamples")
    seed = getattr(args, "seed", default.seed)
    seed = seed if isinstance(seed, int) and seed >= 0 else default.seed
    if level not in (None, 0):
        IntervalOptions(level, n_resamples, seed)  # the checks of every surface
    return {"confidence_level": None if level in (None, 0) else float(level), "n_resamples": n_resamples, "seed": seed,
            "sample_size_sweep": bool(getattr(args, "sample_size_sweep", False)),
            "sweep_sizes": list(getattr(args, "sweep_sizes", SWEEP_SIZES))}


# ---------------------------------------------------------------------------------------------- textxai compare


def _expand(module_name: str, result: Mapping, label: str) -> dict:
    """The results held by one saved JSON file, ``{label: result}`` (its descriptor's ``run_results``: a naopc run
    file holds one result per attribution method; a toki_trust one its verdicts as trust_labels)."""
    from textxai import registry

    split = registry.get(module_name).run_results
    return {label: result} if split is None else split(result, label)


def compare_files(module_name: str, paths: Sequence[str], names: Sequence[str] | None = None,
                  confidence_level: float = IntervalOptions.confidence_level, n_resamples: int = IntervalOptions.n_resamples,
                  seed: int | None = IntervalOptions.seed,
                  sweep_sizes: Sequence[int] | None = None):
    """Intervals of every result in the JSON files ``paths`` (``textxai run`` outputs, or a module's result with
    its per-example values) and the paired comparison of every pair (with ``sweep_sizes``: also
    :func:`compare_sample_size_sweep` of every summary). Returns ``(text report, dict)``."""
    import json
    from pathlib import Path

    stats.resampling_unit(module_name)  # a known method (a ValueError naming them otherwise)
    if names is not None and len(names) != len(paths):
        raise ValueError(f"names has {len(names)} items but {len(paths)} files were given: expected one name per file")
    results, source = {}, {}
    labels = list(names) if names else ([""] if len(paths) == 1 else file_labels(paths))
    for i, path in enumerate(paths):
        p = Path(path)
        if not p.is_file():
            raise ValueError(f"results file {str(path)!r}: no such file; expected the .json a `textxai run "
                             f"{module_name}` wrote (or a result saved with its per-example values)")
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"results file {str(path)!r}: not JSON ({error}); expected the .json a `textxai run "
                             f"{module_name}` wrote") from None
        if not isinstance(data, Mapping):
            raise ValueError(f"results file {str(path)!r}: holds a JSON {type(data).__name__}; expected the object "
                             f"a `textxai run {module_name}` wrote")
        for label, result in _expand(module_name, data, labels[i]).items():
            if label in results:   # two results under one name: the first would be dropped silently
                raise ValueError(f"results files {source[label]!r} and {str(path)!r} both give a result named "
                                 f"{label!r}; pass --names with one distinct name per file")
            results[label], source[label] = result, str(path)
    if len(results) < 2:
        raise ValueError(f"files={list(paths)} hold {len(results)} result: expected at least two to compare "
                         f"(several files, or one naopc file with several attribution methods)")
    lines, out = [], {"intervals": {}, "comparisons": {}}
    for name, res in results.items():
        stats.add_intervals(module_name, res, confidence_level, n_resamples, seed)
        out["intervals"][name] = res["intervals"]
        lines += [intervals_table(res["intervals"], f"== {name}"), ""]
    names_ = list(results)
    for i, a in enumerate(names_):
        for b in names_[i + 1:]:
            c = stats.compare(module_name, results[a], results[b], confidence_level, n_resamples, seed)
            out["comparisons"][f"{a} vs {b}"] = c
            lines += [f"== paired comparison, {a} vs {b} (same {stats.resampling_unit(module_name)}s, in the same order)",
                      compare_table(c, a, b), ""]
            if sweep_sizes:
                sweeps = {key: stats.compare_sample_size_sweep(module_name, results[a], results[b], key, sweep_sizes,
                                                         confidence_level=confidence_level, seed=seed) for key in c}
                out.setdefault("sample_size_sweep", {})[f"{a} vs {b}"] = sweeps
                lines.append(f"   median Wilcoxon p (share of draws whose CI of a - b excludes 0) at n = "
                             f"{', '.join(map(str, sweep_sizes))} (* = more units than given: projected)")
                for key, rows in sweeps.items():
                    cells = [f"{r['p_value']:.3g} ({r['share_significant']:.0%}){'*' if r['projected'] else ''}"
                             for r in rows]
                    lines.append(f"   {key:<24} " + "  ".join(cells))
                lines.append("")
    lines.append("Difference: bootstrap interval of a - b, units resampled jointly; p: Wilcoxon signed-rank test of "
                 "the per-unit differences (textxai.stats.compare).")
    return "\n".join(lines), out


def file_labels(paths: Sequence[str]) -> list[str]:
    """A distinct label per file: its stem, with as many parent folders as it takes to tell the files apart
    (``A/naopc.json``, ``B/naopc.json`` -> ``A/naopc``, ``B/naopc``; the same file twice keeps its path).

    >>> file_labels(["runs/A/naopc.json", "runs/B/naopc.json", "other.json"])
    ['A/naopc', 'B/naopc', 'other']
    """
    from pathlib import PurePath

    parts = [PurePath(p).with_suffix("").parts or (str(p),) for p in paths]
    depth = {i: 1 for i in range(len(paths))}
    while True:
        labels = ["/".join(parts[i][-depth[i]:]) for i in range(len(paths))]
        clashes = {i for i in range(len(paths)) if labels.count(labels[i]) > 1 and depth[i] < len(parts[i])}
        if not clashes:
            return labels
        for i in clashes:
            depth[i] += 1


def add_compare_parser(commands) -> None:
    """``textxai compare A.json B.json ... --module NAME`` (a sub-command of the ``textxai`` CLI)."""
    from textxai import registry

    parser = commands.add_parser("compare", help="confidence intervals and paired comparisons of saved results "
                                                 "(several methods / editors / models on the same examples)")
    parser.add_argument("files", nargs="+", help="result .json files of `textxai run MODULE` (same examples, same order)")
    parser.add_argument("--module", required=True, choices=registry.names())
    parser.add_argument("--names", nargs="+", default=None, help="a name per file (default: the file names)")
    default = IntervalOptions()
    parser.add_argument("--confidence-level", type=float, default=default.confidence_level)
    parser.add_argument("--n-resamples", type=int, default=default.n_resamples)
    parser.add_argument("--seed", type=int, default=default.seed)
    parser.add_argument("--output", default=None, help="also write the comparison as .json and its error bars as .png")
    parser.add_argument("--sample-size-sweep", type=int, nargs="*", default=None, metavar="N",
                        help="also: p-value against the number of examples (default sizes 10 50 100 200, as the "
                             "inconsistency paper's Tables 4-5)")
    parser.set_defaults(func=_cmd_compare)


def _cmd_compare(args) -> int:
    try:
        sizes = None if args.sample_size_sweep is None else (args.sample_size_sweep or list(SWEEP_SIZES))
        text, out = compare_files(args.module, args.files, args.names, args.confidence_level, args.n_resamples, args.seed,
                                  sweep_sizes=sizes)
    except (ValueError, TypeError) as error:
        raise SystemExit(f"textxai compare: {error}") from error
    print(text)
    if args.output:  # replaced together, as textxai run writes (textxai.outputs)
        from textxai.outputs import staged, to_jsonable

        stem = f"compare_{args.module}"
        with staged(args.output, [stem]) as stage:
            written = stage.write(stem, to_jsonable(out), {"intervals": plot_intervals(out["intervals"])})
        print(f"Wrote {' and '.join(str(p) for p in written)}")
    return 0
