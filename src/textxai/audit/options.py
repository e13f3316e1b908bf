"""The audit's options: one small frozen dataclass per stage, read from Python keywords, a config file
(YAML or JSON: ``{"faithfulness": {"methods": ["omission", "gradient"]}}``) or flags (``--faithfulness.methods
omission gradient``). Unknown stages or fields are refused, naming them and what is valid.

>>> o = audit_options({"faithfulness": {"max_texts": 12}, "sections": ["difficulty", "faithfulness"]})
>>> o.faithfulness.max_texts, o.sections
(12, ('overview', 'difficulty', 'faithfulness'))
>>> audit_options({"faithfulnes": {}})
Traceback (most recent call last):
...
ValueError: faithfulnes: no such audit stage; expected one of ['counterfactual', 'difficulty', 'faithfulness', 'intervals', 'profile', 'run', 'sections', 'trust']
"""
from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from textxai.audit.numbers import Intervals
from textxai.fim.analysis import ShowOptions
from textxai.fim.staged import FIMOptions
from textxai.naopc.texts import NAOPCOptions
from textxai.toki.attack import AttackOptions
from textxai.toki.index import ExplainOptions
from textxai.validation import short_repr

#: The report's sections, in order; ``sections=`` picks some (overview is always there).
SECTIONS = ("overview", "difficulty", "faithfulness", "trust", "counterfactual", "connections")


#: Options that may be 0 (0 attacked texts: no attack).
ZERO_ALLOWED = ("seed", "attack_texts", "shortcut_examples", "max_words")


@dataclass(frozen=True)
class DifficultyOptions:
    """FIM: ``hardest`` examples shown, ``bins`` of accuracy by difficulty / confidence, the FIM test set of
    ``test_set_size`` hardest and easiest texts perturbed along their top eigenvector by ``strengths``. The options
    FIM's analysis shares take its defaults (``hardest``: :class:`textxai.fim.analysis.ShowOptions` ``top``,
    ``batch_size``: :class:`textxai.fim.FIMOptions`): one source of each default."""

    hardest: int = ShowOptions.top
    bins: int = 4
    test_set_size: int = 10
    strengths: tuple = (0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0)
    batch_size: int = FIMOptions.batch_size


@dataclass(frozen=True)
class FaithfulnessOptions:
    """NAOPC: attribution ``methods`` on ``max_texts`` texts (:func:`faithfulness_indices`: the first of at most
    ``max_words`` words, else the shortest; ``max_words=0``: the first, whatever their length), limits by
    ``normalization`` (exact up to ``max_exact_words`` words, else the beam), ``examples`` heat-mapped explanations.

    The beam's limits of an N-word text cost ~N^1.5 model inputs of N words (bench/bench_curves.py: 5,578 inputs
    at 100 words), so the default keeps the section to texts of at most 60 words where the data has enough.
    ``normalization`` is :class:`textxai.naopc.NAOPCOptions`' default; ``max_exact_words`` the audit's own (10
    words: exact limits, else the beam, whatever the device; the method's default depends on the device).
    """

    methods: tuple = ("omission", "input_x_gradient", "integrated_gradients")
    max_texts: int = 20
    max_words: int = 60
    normalization: str = NAOPCOptions.normalization
    max_exact_words: int = 10
    examples: int = 3


def faithfulness_indices(word_counts, options: FaithfulnessOptions) -> list[int]:
    """Which texts the Faithfulness section explains (ascending indices): the first ``max_texts`` of at most
    ``max_words`` words; when fewer qualify, the ``max_texts`` shortest (ties: the earlier text);
    ``max_words=0``: the first ``max_texts``.

    >>> o = FaithfulnessOptions(max_texts=2, max_words=5)
    >>> faithfulness_indices([9, 3, 12, 4, 2], o), faithfulness_indices([9, 3, 12, 7, 8], o)
    ([1, 3], [1, 3])
    >>> faithfulness_indices([9, 3, 12], FaithfulnessOptions(max_texts=2, max_words=0))
    [0, 1]
    """
    counts = list(word_counts)
    if not options.max_words:
        return list(range(min(options.max_texts, len(counts))))
    short = [i for i, n in enumerate(counts) if n <= options.max_words]
    if len(short) >= options.max_texts:
        return short[: options.max_texts]
    return sorted(sorted(range(len(counts)), key=lambda i: (counts[i], i))[: options.max_texts])


@dataclass(frozen=True)
class TrustOptions:
    """TOKI: keyword index from ``train_texts`` / ``train_labels`` (default: the demo model's training texts, else
    the audited texts), ``explainer`` and ``top_k``; ``class_names`` (anchor words per class); the TOKI attack
    vs random substitution on ``attack_texts`` correct predictions (``class_names``: one entry per class, a name or
    anchor words, as a list or joined by commas: ``negative,bad,poor``) (A2T budget ``max_rate``, ``min_similarity``);
    ``shortcuts`` candidates shown, ``shortcut_examples`` each, a candidate only when at least ``shortcut_min_texts``
    distinct texts rest on it (a word twice in one text counts once); ``max_texts``: TOKI assesses the predictions of the
    first ``max_texts`` audited texts only (None: all). ``top_k`` (:class:`textxai.toki.ExplainOptions`), ``max_rate``
    and ``min_similarity`` (:class:`textxai.toki.AttackOptions`) take the method's defaults; ``explainer`` is the
    audit's own (omission: deterministic, where the method's default, LIME, samples)."""

    explainer: str = "omission"
    top_k: int = ExplainOptions.top_k
    max_texts: int | None = None
    train_texts: tuple | None = None
    train_labels: tuple | None = None
    train_limit: int = 200
    class_names: tuple | None = None
    attack_texts: int = 10
    max_rate: float = AttackOptions.max_rate
    min_similarity: float = AttackOptions.min_similarity
    shortcuts: int = 8
    shortcut_examples: int = 2
    shortcut_min_texts: int = 3


@dataclass(frozen=True)
class CounterfactualOptions:
    """CEval + inconsistency: the built-in ``editors`` (``"llm"`` when installed) on the first ``max_texts``
    texts; ``steps`` feedback steps (2 gives inc@1); ``judge``: ``"none"`` or a causal LM (e.g. the packaged
    ``"textxai/smollm2-135m-instruct"``) that scores each chosen counterfactual's text quality, read from its
    probabilities (CEval's four aspects, one forward pass each: :func:`textxai.ceval.judge.probability_scores`)."""

    editors: tuple = ("substitution", "deletion")
    max_texts: int = 20
    steps: int = 2
    judge: str = "none"


#: The stages whose forward passes run in ``run.precision`` (the others always in float32: FIM's gradients and the
#: overview's calibration read the model's exact outputs; faithfulness's attributions are computed in float32,
#: its AOPC curves and NAOPC limits in ``run.precision``).
PRECISION_STAGES = ("faithfulness", "trust", "counterfactual")


@dataclass(frozen=True)
class RunOptions:
    """How the audit runs: batch size, progress bars, the evaluation limit checked before any work, and the
    ``precision`` of the many-pass stages (:data:`PRECISION_STAGES`: NAOPC's curves and limits, TOKI's
    explanations and attack, the editors; "auto": bfloat16 where the hardware has it and the model agrees with float32, see
    ``TextClassifier.resolve_precision``; "float32": the model's exact outputs everywhere)."""

    batch_size: int = 32
    progress: bool = True
    max_evaluations: int | None = None
    precision: str = "auto"


#: Named presets of stage options (``profile=`` / ``--profile``), beneath the config file and the flags (an option
#: given wins over its preset value). "full": every method's defaults on the texts they take. "quick": the same
#: methods on fewer texts (TOKI on the first 100 texts' correct predictions, its keyword index learnt from at most
#: 100 training texts instead of 200, NAOPC's limits and the editors on 10 texts instead of 20): estimates of the
#: same quantities with wider intervals, for a first look at long texts.
PROFILES = {
    "full": {},
    "quick": {"trust": {"max_texts": 100, "train_limit": 100}, "faithfulness": {"max_texts": 10},
              "counterfactual": {"max_texts": 10}},
}


def profile_note(profile: str, options: dict | None = None) -> str:
    """What a profile changes, in one line (the report's and the summary's words), with the values in effect when
    ``options`` (:func:`to_dict`) are given (an option given wins over the preset); "" for the full audit (or a
    profile this version does not know, from another version's audit.json).

    >>> profile_note("quick")
    'quick profile: trust.max_texts=100, trust.train_limit=100, faithfulness.max_texts=10, counterfactual.max_texts=10 (the same methods on fewer texts than the full audit: wider intervals)'
    """
    preset = PROFILES.get(profile)
    if not preset:
        return ""
    changes = ", ".join(f"{stage}.{k}={(options or {}).get(stage, {}).get(k, v)}"
                        for stage, given in preset.items() for k, v in given.items())
    return f"{profile} profile: {changes} (the same methods on fewer texts than the full audit: wider intervals)"


@dataclass(frozen=True)
class AuditOptions:
    sections: tuple = SECTIONS
    profile: str = "full"
    difficulty: DifficultyOptions = field(default_factory=DifficultyOptions)
    faithfulness: FaithfulnessOptions = field(default_factory=FaithfulnessOptions)
    trust: TrustOptions = field(default_factory=TrustOptions)
    counterfactual: CounterfactualOptions = field(default_factory=CounterfactualOptions)
    intervals: Intervals = field(default_factory=Intervals)
    run: RunOptions = field(default_factory=RunOptions)


STAGES = {f.name: f.type for f in dataclasses.fields(AuditOptions) if f.name not in ("sections", "profile")}
_CLASSES = {"difficulty": DifficultyOptions, "faithfulness": FaithfulnessOptions, "trust": TrustOptions,
            "counterfactual": CounterfactualOptions, "intervals": Intervals, "run": RunOptions}


def _coerce(stage: str, name: str, value, default):
    """A config value as the field's type (lists become tuples; ints for int fields)."""
    where = f"{stage}.{name}={short_repr(value)}"
    if isinstance(default, tuple) or (default is None and isinstance(value, (list, tuple))):
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"{where}: expected a list")
        return tuple(value)
    if isinstance(default, bool):
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
            return value.lower() in ("true", "1", "yes")
        if not isinstance(value, bool):
            raise ValueError(f"{where}: expected true or false")
        return value
    if isinstance(default, (int, float)) or default is None:
        if value is None:   # `hardest:` left empty in a YAML file: not given (an option that may be None keeps it)
            return default
        try:
            number = float(value) if isinstance(value, str) else value
        except ValueError:
            raise ValueError(f"{where}: expected a number") from None
        if isinstance(number, bool) or not isinstance(number, (int, float)):
            raise ValueError(f"{where}: expected a number")
        if not math.isfinite(number):   # NaN passed every comparison below; inf failed in int() with no name
            raise ValueError(f"{where}: expected a finite number")
        if isinstance(default, int) or (default is None and float(number).is_integer()):
            if float(number) != int(number):
                raise ValueError(f"{where}: expected a whole number")
            number = int(number)
        if number < 0 or ((isinstance(default, int) or default is None) and number == 0 and name not in ZERO_ALLOWED):
            raise ValueError(f"{stage}.{name}={number!r}: expected a positive number")
        return number
    if not isinstance(value, str):
        raise ValueError(f"{where}: expected a string")
    return value


def _stage(stage: str, given) -> object:
    cls = _CLASSES[stage]
    if isinstance(given, cls):
        return given
    if not isinstance(given, dict):
        raise ValueError(f"{stage}={short_repr(given)}: expected a mapping of its options or a {cls.__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(given) - set(fields))
    if unknown:
        raise ValueError(f"{stage}.{unknown[0]}: no such option; expected one of {sorted(fields)}")
    defaults = cls()
    values = {k: _coerce(stage, k, v, getattr(defaults, k)) for k, v in given.items()}
    try:
        return cls(**values)
    except ValueError as error:   # the group's own checks (intervals: n_resamples >= 99, ...), named as the audit's option
        raise ValueError(f"{stage}.{error}") from None


def audit_options(config=None, **stages) -> AuditOptions:
    """Options from a mapping (a parsed config file) and/or keywords (``faithfulness={"max_texts": 12}``);
    keywords win over the mapping per stage; a ``profile`` (:data:`PROFILES`) fills the options neither gives.

    >>> o = audit_options({"profile": "quick", "faithfulness": {"max_texts": 4}})
    >>> o.profile, o.trust.max_texts, o.faithfulness.max_texts, o.counterfactual.max_texts
    ('quick', 100, 4, 10)
    """
    if isinstance(config, AuditOptions) and not stages:
        return config
    merged = {} if config is None else dict(config) if isinstance(config, dict) else None
    if merged is None:
        raise ValueError(f"config={short_repr(config)}: expected a mapping of stage -> options")
    merged.update({k: v for k, v in stages.items() if v is not None})
    profile = merged.pop("profile", "full")
    if profile not in PROFILES:
        raise ValueError(f"profile={short_repr(profile)}: expected one of {list(PROFILES)}")
    for stage, preset in PROFILES[profile].items():  # beneath what is given; a stage given as its dataclass is whole
        given = merged.get(stage, {})
        merged[stage] = {**preset, **given} if isinstance(given, dict) else given
    valid = sorted(["profile", "sections", *STAGES])
    for key in merged:
        if key not in valid:
            raise ValueError(f"{key}: no such audit stage; expected one of {valid}")
    sections = merged.get("sections", SECTIONS)
    if not isinstance(sections, (str, list, tuple)):
        raise ValueError(f"sections={short_repr(sections)}: expected a list of sections, some of {list(SECTIONS)}")
    sections = tuple(s.strip() for s in sections.split(",")) if isinstance(sections, str) else tuple(sections)
    for s in sections:
        if s not in SECTIONS:
            raise ValueError(f"sections={list(sections)}: {s!r} is not a section; expected some of {list(SECTIONS)}")
    out = _checked({name: _stage(name, merged[name]) for name in STAGES if name in merged})
    return AuditOptions(sections=tuple(s for s in SECTIONS if s in sections or s == "overview"), profile=profile, **out)


def _choices(where: str, values: tuple, valid, renamed: dict | None = None) -> tuple:
    """``values`` (a non-empty list of names from ``valid``; a former name in ``renamed`` becomes its new one)."""
    values = tuple((renamed or {}).get(v, v) for v in values)
    if not values:
        raise ValueError(f"{where}=[]: expected at least one of {list(valid)}")
    for v in values:
        if v not in valid:
            raise ValueError(f"{where}={short_repr(list(values))}: {v!r} is not one; expected some of {list(valid)}")
    return values


def _checked(out: dict) -> dict:
    """Every option value the stages would refuse, refused here, before any model loads or stage runs, naming the
    audit's own option (``faithfulness.methods``, not the library's ``attribution_method``)."""
    from textxai.attribution import METHODS
    from textxai.classifier import PRECISIONS
    from textxai.editors import EDITOR_NAMES, RENAMED_EDITORS
    from textxai.naopc.texts import NORMALIZATIONS

    precision = out["run"].precision if "run" in out else RunOptions.precision
    if precision not in PRECISIONS:
        raise ValueError(f"run.precision={short_repr(precision)}: expected one of {list(PRECISIONS)}")
    if "trust" in out:
        t = out["trust"]
        if t.explainer not in METHODS:  # before any model runs, not when the stage starts
            raise ValueError(f"trust.explainer={short_repr(t.explainer)}: expected one of {list(METHODS)}")
        for name, low in (("max_rate", 0.0), ("min_similarity", -1.0)):
            if not low <= getattr(t, name) <= 1:
                raise ValueError(f"trust.{name}={getattr(t, name)!r}: expected a number in [{low:g}, 1]")
    if "faithfulness" in out:
        f = out["faithfulness"]
        methods = _choices("faithfulness.methods", f.methods, METHODS)
        if f.normalization not in NORMALIZATIONS:
            raise ValueError(f"faithfulness.normalization={short_repr(f.normalization)}: expected one of {list(NORMALIZATIONS)}")
        out["faithfulness"] = dataclasses.replace(f, methods=tuple(dict.fromkeys(methods)))
    if "difficulty" in out:
        d = out["difficulty"]
        try:
            grid = tuple(float(x) for x in d.strengths if not isinstance(x, bool))
        except (TypeError, ValueError):
            grid = ()
        if not grid or len(grid) != len(d.strengths) or not all(0 <= x < float("inf") for x in grid):
            raise ValueError(f"difficulty.strengths={short_repr(list(d.strengths))}: expected a non-empty list of "
                             "finite numbers >= 0 (L2 norms of the push along the top eigenvector)")
        out["difficulty"] = dataclasses.replace(d, strengths=grid)
    if "counterfactual" in out:
        c = out["counterfactual"]
        editors = _choices("counterfactual.editors", c.editors, EDITOR_NAMES, RENAMED_EDITORS)
        if c.steps < 2:
            raise ValueError(f"counterfactual.steps={c.steps}: expected at least 2 (the editor fed its own edit once: "
                             "inc@1)")
        out["counterfactual"] = dataclasses.replace(c, editors=tuple(dict.fromkeys(editors)))
    return out


def read_config(path) -> dict:
    """A YAML (``.yaml`` / ``.yml``) or JSON config file as a mapping."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"--config {str(path)!r}: no such file; expected a YAML or JSON file of stage options")
    text = p.read_text(encoding="utf-8")
    try:
        if p.suffix.lower() in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except Exception as error:  # noqa: BLE001 - a broken file is one clear message
        raise ValueError(f"--config {str(path)!r}: cannot be parsed ({str(error).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise ValueError(f"--config {str(path)!r}: expected a mapping of stage -> options at the top")
    return data


def flag_names() -> list[tuple[str, str, object]]:
    """``(stage, field, default)`` of every option a flag ``--stage.field`` sets (training texts excepted)."""
    out = []
    for stage, cls in _CLASSES.items():
        for f in dataclasses.fields(cls):
            if f.name not in ("train_texts", "train_labels", "max_evaluations", "progress"):
                out.append((stage, f.name, getattr(cls(), f.name)))
    return out


def to_dict(options: AuditOptions) -> dict:
    """The options as plain data (what the report and the cache fingerprint show)."""
    return json.loads(json.dumps(dataclasses.asdict(options), default=str))
