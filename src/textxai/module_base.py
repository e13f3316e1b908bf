"""One evaluate base for every textxai module: optional and variable-length columns, one input contract.

A module script is ``_info`` + ``_compute`` and its docstrings, nothing else::

    class Naopc(TextxaiMetric):
        def _info(self):
            return evaluate.MetricInfo(..., features=datasets.Features(
                {"texts": Value("string"), "attributions": List(Value("float64")), "text_pairs": Value("string")}))

        def _compute(self, texts, attributions=None, text_pairs=None, model=None, ...):
            ...

The base reads everything else from the declared features and the signature of ``_compute``:

- **Columns** are the declared features; ``add``, ``add_batch`` and ``compute`` accept every column of the
  module. A column is **optional** when ``_compute`` gives it a default: leave it out of every call and
  ``_compute`` gets that default; give it in every call since the last ``compute`` or in none (checked at
  each call). ``None`` is a valid cell (e.g. a failed generation): the library decides what it means.
- **One or several**: a column declared as a value in one feature format and as a list of such values in
  another (a counterfactual, or a list of counterfactuals) is stored as a list, a single value as a one-item
  list (``evaluate`` keeps only one type per column).
- **Options** are the other parameters of ``_compute``. A parameter annotated with an option-group dataclass
  (``run: ceval.RunOptions = None``) also makes each field of that group an option, which ``_compute``
  receives through its ``**options`` and hands to the library (``textxai.options.apply_keywords``), so a
  script passes options through instead of listing them::

      def _compute(self, predictions, references, model=None, run: ceval.RunOptions = None, **options):
          return ceval.compute(references, predictions, model=model, run=run, **options)

- **Checked before anything is stored** (so nothing reaches a model): every column is a list with one item
  per example (a string is not a list of texts), all of the same length; every cell has the declared type
  (a number is not a text; Arrow would silently cast it); the required columns are present; every option of
  ``compute`` is one of the module's (a misspelt one is named, with the closest valid name), and an option
  whose default is ``True``/``False`` gets a bool.
- **Usable after a failure**: ``compute`` always ends with an empty instance, also when it raises.
- **Intervals**: ``compute(..., confidence_level=0.95, n_resamples=9999, seed=0)`` hands the result to
  ``textxai.stats.add_intervals`` (one place, :meth:`TextxaiModule._with_intervals`; the defaults are
  ``textxai.stats.IntervalOptions``'s, as on every surface).
- **JSON-valid results**: NaN and infinities become ``None`` (``null``), numpy values plain Python ones
  (``textxai.outputs.to_jsonable``), so ``evaluate.save(folder, **result)`` writes valid JSON.
- **evaluate.combine**: evaluate's ``CombinedEvaluations`` hands every keyword to every module (``add`` /
  ``add_batch`` even fail on a column one module lacks). When a textxai module is among the combined ones,
  each module gets the columns it declares and the options it takes (:func:`accepted_arguments`); a keyword
  no module takes is refused, naming each module's arguments. Other combinations run as evaluate wrote them.

>>> import datasets
>>> one_or_many = [datasets.Features({"p": datasets.Value("string")}),
...                datasets.Features({"p": datasets.List(datasets.Value("string"))})]
>>> storage_features(one_or_many)
({'p': List(Value('string'))}, {'p'})
"""
from __future__ import annotations

import abc
import dataclasses
import functools
import inspect
import numbers
import os

import datasets
import evaluate
import numpy as np

from textxai.options import did_you_mean, group_fields
from textxai.stats import IntervalOptions
from textxai.validation import check_positive_int, check_unicode, short_repr

#: ``compute``'s interval keywords: none unless ``confidence_level`` is given; the rest from ``IntervalOptions``
INTERVAL_OPTIONS = {"confidence_level": None, "n_resamples": IntervalOptions.n_resamples}


def storage_features(features) -> tuple[datasets.Features, set[str]]:
    """(one ``Features`` holding every declared column, the columns stored as lists of "one or several")."""
    formats = features if isinstance(features, (list, tuple)) else [features]
    merged: dict = {}
    one_or_many: set[str] = set()
    for fmt in formats:
        for name, feature in fmt.items():
            old = merged.setdefault(name, feature)
            if old == feature:
                continue
            if isinstance(old, datasets.List) and old.feature == feature:
                one_or_many.add(name)
            elif isinstance(feature, datasets.List) and feature.feature == old:
                merged[name] = feature
                one_or_many.add(name)
            else:
                raise TypeError(f"column {name!r} is declared as {old} and as {feature}: expected one type, "
                                f"or a value and a list of such values")
    return datasets.Features(merged), one_or_many


def _is_list(value) -> bool:
    return isinstance(value, (list, tuple, np.ndarray))


def _type_error(name: str, value, expected: str) -> TypeError:
    return TypeError(f"{name}={short_repr(value)} ({type(value).__name__}): expected {expected}")


def check_cell(feature, value, name: str) -> None:
    """``value`` fits ``feature`` (``None`` anywhere: the library decides what a missing value means)."""
    if value is None:
        return
    if isinstance(feature, datasets.List):
        if not _is_list(value):
            raise _type_error(name, value, _describe(feature))
        for j, item in enumerate(value):
            check_cell(feature.feature, item, f"{name}[{j}]")
    elif isinstance(feature, datasets.Value):
        kind = feature.dtype
        if kind == "string":
            ok = isinstance(value, str)
        elif kind.startswith("int"):
            ok = isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))
        elif kind.startswith("float"):
            ok = isinstance(value, (numbers.Real, np.floating)) and not isinstance(value, (bool, np.bool_))
        else:
            ok = True
        if not ok:
            raise _type_error(name, value, _describe(feature))
        if kind == "string":
            check_unicode(value, name)  # before Arrow, whose own error would not name the column


def _describe(feature, plural: bool = False) -> str:
    """'a string' / 'strings', 'a list of integers', ... for error messages."""
    if isinstance(feature, datasets.List):
        return ("lists" if plural else "a list") + f" of {_describe(feature.feature, plural=True)}"
    kind = getattr(feature, "dtype", "")
    name = "string" if kind == "string" else "integer" if kind.startswith("int") else \
        "number" if kind.startswith("float") else str(feature)
    return f"{name}s" if plural else f"an {name}" if name[0] in "aeiou" else f"a {name}"


class TextxaiModule(abc.ABC):
    """Mixin over ``evaluate.EvaluationModule``: use :class:`TextxaiMetric` or :class:`TextxaiMeasurement`.

    Abstract, so that ``evaluate.load`` picks the script's class, not this one, from the script's names.
    """

    @abc.abstractmethod
    def _info(self):
        """The module's ``evaluate.MetricInfo`` / ``MeasurementInfo``, its columns as ``features``."""

    @abc.abstractmethod
    def _compute(self, **columns_and_options):
        """The result dict from the columns (one list per column) and the options."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "_compute" in cls.__dict__:  # a module script: its _compute receives the stored columns, cleaned
            cls._compute = _from_storage(cls.__dict__["_compute"])

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        features, self._one_or_many = storage_features(self._module_info.features)
        self._module_info.features = features
        params = inspect.signature(type(self)._compute, eval_str=True).parameters
        missing = [c for c in features if c not in params]
        if missing:
            raise TypeError(f"{type(self).__name__}._compute has no parameter for the column {missing[0]!r}")
        self._required = [c for c in features if c in params and params[c].default is inspect.Parameter.empty]
        self._options = _options_of(type(self).__name__, params, features)
        self._given = None  # the optional columns of the calls since the last compute

    @property
    def compute_arguments(self) -> frozenset:
        """Every keyword ``compute`` takes: the columns, the options (option-group fields included) and the
        interval options."""
        return frozenset(self._module_info.features) | frozenset(self._options) | frozenset(INTERVAL_OPTIONS)

    # ------------------------------------------------------------------ the three entry points

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch: every column a list with one item per example (optional columns in every call or none)."""
        columns, given = self._columns({"predictions": predictions, "references": references, **kwargs}, "add_batch")
        out = super().add_batch(**columns)
        self._given = given
        return out

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one example: each column's value for it (optional columns in every call or none)."""
        example = {"predictions": prediction, "references": reference, **kwargs}
        self._check_names(example, "add")
        if all(v is None for v in example.values()):
            raise ValueError(f"add() got no column: expected the example's {list(self._module_info.features)}")
        # None: a missing value when the column is required or was given before (a failed generation), else absent
        keep = set(self._required) | set(self._given or ())
        batch = {k: [v] for k, v in example.items() if v is not None or k in keep}
        return self.add_batch(**batch)

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Compute on every example added so far and those given here; the instance is empty afterwards."""
        given = {"predictions": predictions, "references": references, **kwargs}
        columns = {k: given.pop(k) for k in list(given) if k in self._module_info.features}
        given = {k: v for k, v in given.items() if not (k in ("predictions", "references") and v is None)}
        intervals = {k: given.pop(k, default) for k, default in INTERVAL_OPTIONS.items()}
        intervals["seed"] = given.get("seed", IntervalOptions.seed) if "seed" in self._options \
            else given.pop("seed", IntervalOptions.seed)
        try:
            options = self._check_options(given)
            strip = self._interval_options(options, **intervals)
            if any(v is not None for v in columns.values()):
                self.add_batch(**columns)
            elif self.writer is None:
                raise ValueError(f"{self._required[0] if self._required else 'inputs'}=None: nothing to compute: "
                                 f"expected the columns {list(self._module_info.features)} in compute() or "
                                 f"added before with add() / add_batch()")
            result = super().compute(**options)
        except BaseException:
            self._discard()
            raise
        self.file_paths = self.filelocks = self._given = None  # evaluate removed and released the files
        result = self._with_intervals(result, **intervals)
        if strip and result is not None:
            result.pop("per_example", None)
        from textxai.outputs import to_jsonable

        return None if result is None else to_jsonable(result)

    # ------------------------------------------------------------------ checks

    def _check_names(self, given: dict, where: str) -> None:
        names = list(self._module_info.features)
        unknown = [k for k, v in given.items() if k not in names and v is not None]
        if unknown:
            raise ValueError(f"{where}({unknown[0]}=...): not a column of {self.name}; expected the columns "
                             f"{names} (options such as model go to compute())")

    def _columns(self, given: dict, where: str) -> tuple[dict, frozenset]:
        """(the batch as evaluate stores it: lists of equal length, absent optional columns as None cells,
        the optional columns given)."""
        self._check_names(given, where)
        features = self._module_info.features
        columns = {k: given[k] for k in features if given.get(k) is not None}  # in the declared order
        for name in self._required:
            if name not in columns:
                raise ValueError(f"{name}=None: expected a list with one item per example in every "
                                 f"{where} call (a required column of {self.name})")
        optional = frozenset(columns) - set(self._required)
        if self._given is not None and optional != self._given:
            name = sorted(optional ^ self._given)[0]
            raise ValueError(f"{name}={'given' if name in optional else 'None'} but the earlier add / add_batch calls "
                             f"since the last compute {'did not give' if name in optional else 'gave'} it: "
                             f"expected it in every call or in none")
        n = None
        for name, value in columns.items():
            if isinstance(value, np.ndarray):
                value = value.tolist()
            if not isinstance(value, (list, tuple)):
                raise _type_error(name, value, "a list with one item per example")
            value = list(value)
            if n is None:
                first, n = name, len(value)
            elif len(value) != n:
                raise ValueError(f"{name} has {len(value)} items but {first} has {n}: expected the same length")
            feature = features[name]
            for i, cell in enumerate(value):
                scalar = name in self._one_or_many and not _is_list(cell)
                check_cell(feature.feature if scalar else feature, cell, f"{name}[{i}]")
            if name in self._one_or_many:
                value = [v if _is_list(v) else [v] for v in value]
            columns[name] = value
        return {name: columns.get(name, [None] * (n or 0)) for name in features}, optional

    def _check_options(self, options: dict) -> dict:
        unknown = [k for k in options if k not in self._options]
        if unknown:
            name = unknown[0]
            valid = sorted(self._options) + sorted(INTERVAL_OPTIONS)
            raise TypeError(f"{name}={short_repr(options[name])}: not an option of {self.name}"
                            f"{did_you_mean(name, valid + list(self._module_info.features))}; expected one of {valid} "
                            f"or the columns {list(self._module_info.features)}")
        for k, v in options.items():
            if isinstance(self._options[k], bool):
                if not isinstance(v, (bool, np.bool_)):
                    raise TypeError(f"{k}={short_repr(v)}: expected True or False")
                options[k] = bool(v)
        return options

    # ------------------------------------------------------------------ evaluate's storage

    def _enforce_nested_string_type(self, schema, obj):
        # evaluate checks the first cell of each column; cells were checked in _columns and may be None
        return None

    def _discard(self) -> None:
        """Forget what was added (writer, data, cache files, locks): the next call starts empty."""
        self._given = None
        writer, self.writer = self.writer, None
        if writer is not None:
            try:
                writer.close()
            except Exception:  # already closed or never opened: nothing to keep either way
                pass
        paths = list(self.file_paths or []) + ([self.cache_file_name] if self.cache_file_name else [])
        locks = list(self.filelocks or []) + ([self.filelock] if self.filelock is not None else [])
        self.data = self.buf_writer = self.selected_feature_format = None
        self.file_paths = self.filelocks = self.cache_file_name = self.filelock = None
        for path in paths:
            if path and os.path.exists(path):
                os.remove(path)
        for lock in {id(lock): lock for lock in locks if lock is not None}.values():
            lock.release()

    # ------------------------------------------------------------------ intervals (issue 14)

    def _interval_options(self, options: dict, confidence_level=None, n_resamples=IntervalOptions.n_resamples,
                          seed=IntervalOptions.seed) -> bool:
        """Check the interval options before any work; ask for the per-example values the intervals need.
        True when ``per_example`` is there only for the intervals (then left out of the result)."""
        if confidence_level is None:
            return False
        if isinstance(confidence_level, bool) or not isinstance(confidence_level, (int, float)) \
                or not 0 < confidence_level < 1:
            raise ValueError(f"confidence_level={short_repr(confidence_level)}: expected a number strictly between "
                             f"0 and 1, e.g. 0.95 (or None for no intervals)")
        check_positive_int(n_resamples, "n_resamples")
        if "return_per_example" not in self._options or options.get("return_per_example"):
            return False
        options["return_per_example"] = True
        return True

    def _with_intervals(self, result, confidence_level=None, n_resamples=IntervalOptions.n_resamples,
                        seed=IntervalOptions.seed):
        """``result`` with confidence intervals from ``textxai.stats`` when ``confidence_level`` is given."""
        if confidence_level is None or result is None:
            return result
        from textxai.stats import add_intervals  # lazy: scipy's bootstrap only when intervals are asked for

        return add_intervals(self.name, result, confidence_level=confidence_level, n_resamples=n_resamples,
                             seed=seed)


def _options_of(script: str, params, features) -> dict:
    """``{option: default}`` of a ``_compute`` signature: its parameters that are not columns, and the fields
    of each option group (a parameter annotated with a dataclass), which arrive in its ``**options``."""
    options, groups = {}, []
    for name, param in params.items():
        if name == "self" or name in features or param.kind is param.VAR_KEYWORD:
            continue
        options[name] = param.default
        if isinstance(param.annotation, type) and dataclasses.is_dataclass(param.annotation):
            groups.append(param.annotation)
    if groups and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        raise TypeError(f"{script}._compute takes the option group(s) {[g.__name__ for g in groups]} but no "
                        f"**options: expected **options for the groups' fields")
    for group in groups:
        options.update(group_fields(group))
    return options


def _from_storage(compute):
    """Wrap a script's ``_compute``: optional columns that were not given are left out (their default applies)."""

    @functools.wraps(compute)
    def wrapper(self, **kwargs):
        columns = [c for c in self._module_info.features if c in kwargs]
        if not columns or len(kwargs[columns[0]]) == 0:
            first = self._required[0] if self._required else columns[0] if columns else "inputs"
            raise ValueError(f"{first}=[]: expected at least one example")
        for name in columns:
            if name not in self._required and name not in (self._given or ()):
                del kwargs[name]
        return compute(self, **kwargs)

    return wrapper


class TextxaiMetric(TextxaiModule, evaluate.Metric):
    """Base of the textxai metrics (see the module docstring)."""


class TextxaiMeasurement(TextxaiModule, evaluate.Measurement):
    """Base of the textxai measurements (see the module docstring)."""


# ---------------------------------------------------------------------- evaluate.combine


def accepted_arguments(module) -> tuple[frozenset, bool]:
    """(the keywords ``module.compute`` names, whether it takes other keywords too): a textxai module's
    ``compute_arguments`` (option-group fields included), else its ``_compute``'s parameters and columns."""
    if hasattr(module, "compute_arguments"):
        return module.compute_arguments, False
    if not hasattr(module, "_compute"):
        return frozenset(), True
    params = inspect.signature(module._compute).parameters
    names = frozenset(params) | frozenset(getattr(module, "_feature_names", list)())
    return names, any(p.kind is p.VAR_KEYWORD for p in params.values())


def _route(modules, given: dict, where: str) -> list[dict]:
    """The keywords of each combined module: its columns (``add`` / ``add_batch``) or its columns and options
    (``compute``); a keyword given (not None) that no module takes raises a TypeError naming every module's."""
    given = {k: v for k, v in given.items() if v is not None}
    routed, taken = [], set()
    for module in modules:
        if where == "compute":
            names, takes_more = accepted_arguments(module)
        else:
            names, takes_more = frozenset(module._feature_names()), False
        mine = {k: v for k, v in given.items() if takes_more or k in names}
        routed.append(mine)
        taken.update(mine)
    stray = [k for k in given if k not in taken]
    if stray:
        expected = {m.name: sorted(k for k in (m._feature_names() if where != "compute" else accepted_arguments(m)[0])
                                   if k != "self") for m in modules}
        raise TypeError(f"{where}({stray[0]}=...): no combined module takes it; expected the arguments of one of "
                        f"{expected}")
    return routed


def _routing(method_name: str, original):
    singular = method_name == "add"

    @functools.wraps(original)
    def routed(self, *args, **kwargs):
        modules = self.evaluation_modules
        if args or not any(isinstance(m, TextxaiModule) for m in modules):
            return original(self, *args, **kwargs)
        if singular:  # evaluate's add names the columns predictions / references, as add_batch does
            kwargs = {{"prediction": "predictions", "reference": "references"}.get(k, k): v for k, v in kwargs.items()}
        per_module = _route(modules, kwargs, method_name)
        results = [getattr(module, method_name)(**mine) for module, mine in zip(modules, per_module)]
        return self._merge_results(results) if method_name == "compute" else None

    routed._textxai_routed = True
    return routed


def _install_combine_routing() -> None:
    """Route ``evaluate.combine``'s keywords to the modules that take them (see the module docstring)."""
    cls = evaluate.module.CombinedEvaluations
    for name in ("add", "add_batch", "compute"):
        method = getattr(cls, name)
        if not getattr(method, "_textxai_routed", False):
            setattr(cls, name, _routing(name, method))


_install_combine_routing()
