"""The method registry: what every surface (modules, CLI, estimates, intervals, callback, Spaces) knows of a method.

Each method is one package ``textxai/<package>/`` whose ``method.py`` calls :func:`register` with one
:class:`Method` descriptor. Nothing else in the library lists method names: ``textxai list``, ``textxai
run``, ``textxai demo``, the work estimates, the bootstrap intervals, the training callback and
``textxai publish`` all read :func:`methods` / :func:`get`. A method registered at run time (a test's, a
user's plug-in) appears on every surface the same way.

>>> [m.name for m in methods()]
['inconsistency', 'fim_difficulty', 'toki_trust', 'naopc', 'ceval']
>>> get("naopc").unit, get("fim_difficulty").kind
('example', 'measurement')
>>> get("nope")
Traceback (most recent call last):
...
ValueError: method='nope' is not a textxai method; expected one of ['ceval', 'fim_difficulty', 'inconsistency', 'naopc', 'toki_trust']
"""
from __future__ import annotations

import dataclasses
import importlib
from argparse import ArgumentParser, Namespace
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

KINDS = ("metric", "measurement")


@dataclass
class Analysis:
    """One method's answer on one input, computed once and shown by every surface.

    ``results``: the JSON-able results ``textxai run`` writes (summaries, ``per_example`` rows,
    ``intervals``, comparisons); ``summary``: what the evaluate module's ``compute`` returns; ``warnings``:
    one plain sentence each (narrow limits, undetermined verdicts, failed generations, ...); ``figures``:
    ``{name: matplotlib Figure}``; ``report``: the plain-text report the CLI prints.
    """

    method: str
    results: dict
    summary: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    figures: dict = field(default_factory=dict)
    report: str = ""

    @property
    def rows(self) -> list:
        """The per-example rows (``results["per_example"]`` as a list; empty when the method keeps none)."""
        rows = self.results.get("per_example", self.results.get("examples"))  # toki keeps its rows as "examples"
        if isinstance(rows, Mapping):  # a dict of columns (inconsistency) or of methods (naopc): one list of values
            return [dict(zip(rows, values)) for values in zip(*rows.values())] if all(
                isinstance(v, list) for v in rows.values()) else []
        return list(rows or [])


@dataclass(frozen=True)
class Method:
    """One method as every surface sees it.

    ``name``: the evaluate module's name (``textxai.load(name)``, ``textxai run <name>``); ``kind``: "metric"
    or "measurement" (its folder: ``metrics/<name>`` or ``measurements/<name>``); ``help``: one line for
    ``textxai list`` and ``--help``; ``order``: its place in lists and in ``textxai demo``.
    ``inputs``: ``{compute argument: callback data field}`` (:class:`textxai.integrations.CallbackInputs`);
    ``required``: the callback fields it cannot run without.
    ``option_groups``: ``{compute parameter: option dataclass}``, the one source of the defaults.
    ``unit``: what the bootstrap resamples (one word, e.g. "example", "chain"); ``estimands(result) ->
    {summary key: textxai.stats.Estimand}``: the per-unit values each summary's interval is computed from.
    ``estimate(words, options, num_labels=2, device="cpu", pairs=False) -> int``: model evaluations of a run
    before any model call; ``words``: words per text (pairs summed, ``pairs=True``); ``options``: ``{name:
    value}``, the option groups' defaults overlaid with the run's settings (:meth:`run_options`).
    ``flags``: ``{library argument: the textxai run flag that sets it}`` where the two names differ
    (``{"attributions": "--attributions-column"}``): a library message about the argument names the flag.
    ``run_results(results, label) -> {label: result}``: the results one saved ``textxai run`` file holds, each
    one its ``estimands`` read (naopc: one per attribution method); ``None``: the file is one result.
    ``runner``: its CLI glue (``add_arguments(parser)``, ``run(args, texts, text_pairs, labels, classifier)
    -> (results, figures)``, optionally ``demo(progress) -> (report, results, figures)``), as an import path
    (``"textxai.naopc.runner"``) or a module object; ``data_parallel``: its run splits the texts across
    ``accelerate`` processes (else only the main process runs it).
    ``folder``: the module folder when it is not shipped with the package (a plug-in's, a test's).
    ``analyse``: the method's :class:`Analysis` entry point.
    ``comparable``: the summary keys whose values may be compared across two models (the same quantity on the
    same scale whatever the model: NAOPC, a trust rate, a flip rate); the others (raw AOPC, mean log10 λ_max)
    are shown side by side without a verdict (:func:`textxai.readings.comparable`, docs/readings.md).
    """

    name: str
    kind: str
    help: str
    order: int = 100
    inputs: Mapping = field(default_factory=dict)
    required: tuple = ()
    option_groups: Mapping = field(default_factory=dict)
    unit: str = "example"
    estimands: Callable | None = None
    estimate: Callable | None = None
    flags: Mapping = field(default_factory=dict)
    run_results: Callable | None = None
    runner: str | ModuleType | None = None
    data_parallel: bool = False
    folder: Path | None = None
    analyse: Callable | None = None
    comparable: tuple = ()

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"name={self.name!r}: expected a method name that is a Python identifier")
        if self.kind not in KINDS:
            raise ValueError(f"kind={self.kind!r}: expected one of {list(KINDS)}")
        if not isinstance(self.unit, str) or not self.unit:
            raise ValueError(f"unit={self.unit!r}: expected what the bootstrap resamples, e.g. 'example'")
        if self.runner is not None and not isinstance(self.runner, (str, ModuleType)):
            raise TypeError(f"runner={self.runner!r}: expected an import path or a module (or None)")
        for group, cls in dict(self.option_groups).items():
            if not (dataclasses.is_dataclass(cls) and isinstance(cls, type)):
                raise TypeError(f"option_groups[{group!r}]={cls!r}: expected an option-group dataclass")

    @property
    def folder_kind(self) -> str:
        """``metrics`` or ``measurements``: where its module folder sits."""
        return self.kind + "s"

    def option_defaults(self) -> dict:
        """``{option: default}`` over its option groups (the one source of defaults)."""
        from textxai.options import group_fields

        out = {}
        for group in self.option_groups.values():
            out.update(group_fields(group))
        return out

    def run_options(self, settings=None) -> dict:
        """``{option: value}`` of a run: :meth:`option_defaults`, then the defaults of its runner's arguments, then
        ``settings`` (a mapping, or the parsed ``argparse`` arguments of ``textxai run``); what :attr:`estimate`
        reads, so an estimate repeats no default."""
        given = vars(settings) if isinstance(settings, Namespace) else dict(settings or {})
        return {**self.option_defaults(), **self.argument_defaults(), **given}

    def argument_defaults(self) -> dict:
        """``{dest: default}`` of the arguments its runner adds to ``textxai run <name>`` (``{}`` without one)."""
        glue = self.runner_module()
        if glue is None or not hasattr(glue, "add_arguments"):
            return {}
        parser = ArgumentParser(add_help=False, conflict_handler="resolve")
        glue.add_arguments(parser)
        return vars(parser.parse_known_args([])[0])  # as textxai run sees them (a runner adds no required argument)

    def runner_module(self):
        """Its CLI glue module (``None`` when it has none)."""
        if self.runner is None or isinstance(self.runner, ModuleType):
            return self.runner
        return importlib.import_module(self.runner)


_METHODS: dict[str, Method] = {}
_DISCOVERED = False


def _discover() -> None:
    """Import every ``textxai.<package>.method`` once: each registers its descriptor."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    root = Path(__file__).resolve().parent  # the textxai package (no import of it: no cycle through textxai)
    for info in pkgutil.iter_modules([str(root)]):
        if info.ispkg and (root / info.name / "method.py").is_file():
            importlib.import_module(f"textxai.{info.name}.method")


def register(method: Method, replace: bool = False) -> Method:
    """Add ``method`` to the registry (``replace=True`` overwrites a method of the same name); returns it."""
    if not isinstance(method, Method):
        raise TypeError(f"method={method!r}: expected a textxai.registry.Method")
    if method.name in _METHODS and not replace and _METHODS[method.name] != method:
        raise ValueError(f"method {method.name!r} is registered already; pass replace=True to overwrite it")
    _METHODS[method.name] = method
    return method


def unregister(name: str) -> None:
    """Remove a method registered at run time (tests, plug-ins)."""
    _METHODS.pop(name, None)


def methods() -> list[Method]:
    """Every registered method, in their ``order``."""
    _discover()
    return sorted(_METHODS.values(), key=lambda m: (m.order, m.name))


def names() -> list[str]:
    """The registered methods' names, in their ``order``."""
    return [m.name for m in methods()]


def get(name) -> Method:
    """The descriptor of method ``name`` (``"textxai/<name>"`` accepted)."""
    _discover()
    if isinstance(name, str) and name.startswith("textxai/"):
        name = name.split("/", 1)[1]
    if not isinstance(name, str) or name not in _METHODS:
        raise ValueError(f"method={name!r} is not a textxai method; expected one of {sorted(_METHODS)}")
    return _METHODS[name]


def replace(name: str, **changes) -> Method:
    """Register a copy of method ``name`` with ``changes`` (its analysis, estimate, ...)."""
    return register(dataclasses.replace(get(name), **changes), replace=True)
