"""The Counterfactual robustness section (CEval + inconsistency) as plain data: per built-in editor the flip
rate, probability change and token distance of its counterfactuals, and inc@1 of its feedback chains.

Each editor is called once per text: the feedback chains' first step reuses the candidates CEval picked from
(:class:`Memo`), so inc@1 costs one more editor call per text.
"""
from __future__ import annotations

import numpy as np

import warnings

from textxai import ceval
from textxai import inconsistency as inc
from textxai.inconsistency.analysis import analyse as inc_analyse
from textxai.audit import numbers as nb
from textxai.audit.options import CounterfactualOptions
from textxai.parallel import split


class Memo:
    """An editor that answers a text it has already edited from memory (same candidates, no model call)."""

    def __init__(self, editor):
        self.editor, self.seen = editor, {}

    def __call__(self, texts) -> list[list[str]]:
        todo = [t for t in dict.fromkeys(texts) if t not in self.seen]
        if todo:
            self.seen.update(zip(todo, self.editor(todo)))
        return [list(self.seen[t]) for t in texts]


#: editor -> the extra it needs beyond the base install (the substitution editor's GloVe neighbours)
EDITOR_EXTRAS = {"substitution": "toki"}


def available_editors() -> list[str]:
    """The built-in editors' names (``textxai.editors.EDITOR_NAMES``) whose extra is installed."""
    from textxai.editors import EDITOR_NAMES
    from textxai.extras import missing

    return [e for e in EDITOR_NAMES if e not in EDITOR_EXTRAS or missing(EDITOR_EXTRAS[e]) is None]


def one_editor(clf, texts, name: str, options: CounterfactualOptions, iv: nb.Intervals, batch_size: int = 32,
               progress: bool = False, precision: str = "float32") -> dict:
    """CEval metrics of the best counterfactual per text, and inc@1 of the editor's feedback chains; the built-in
    classifier-driven editors run their forward passes in ``precision`` (CEval's metrics in float32)."""
    from textxai.editors import get_editor

    extra = {"batch_size": batch_size} if name == "deletion" else {}
    if name in ("deletion", "substitution"):
        extra["precision"] = precision
    if name == "llm":  # k candidates, the classifier choosing (textxai.llm_editor.DEFAULTS)
        from textxai.llm_editor import DEFAULTS

        extra.update(DEFAULTS)
    # every call of the editor shares its texts out under a multi-process audit (textxai.parallel.collective)
    editor = Memo(split(get_editor(name, clf, progress=progress, **extra), over=("texts",)))
    candidates = editor(texts)
    chosen = ceval.pick_counterfactuals(texts, candidates, clf, k=1, batch_size=batch_size)
    shown = _intervals(iv)
    judge = None if options.judge == "none" else options.judge   # read from its probabilities (CEval's 4 aspects)
    # the methods' own analyses: CEval of the chosen counterfactuals, inconsistency of the editor's chains
    scored = ceval.analyse(texts, [c[0] for c in chosen], classifier=clf, intervals=shown, figures=False,
                           return_per_example=True, batch_size=batch_size, judge=judge).results
    chains = inc.feedback_chains(editor, texts, clf, steps=options.steps, batch_size=batch_size, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the analysis' warnings: kept in its results
        fed = inc_analyse(chains=chains.chains, labels=chains.labels, n=[1], intervals=shown, figures=False).results
    per = scored["per_example"]
    failed = [ceval.is_failed(c[0]) for c in chosen]
    inc1 = [float(v[0]) if len(v) else np.nan for v in fed["per_example"]["inc"]]
    if judge is not None:
        from textxai.ceval.judge import QUALITY_ASPECTS

        quality = [float(np.mean([per[a][i] for a in QUALITY_ASPECTS])) for i in range(len(texts))]
    return {
        "editor": name, "n_texts": len(texts), "n_failed": int(sum(failed)),
        "flip_rate": _entry(scored, "flip_rate"),
        "probability_change": _entry(scored, "probability_change"),
        "token_distance": _entry(scored, "token_distance"),
        "inc@1": _entry(fed, "inc@1"),
        **({} if judge is None else {"text_quality": nb.mean_estimate(
            quality, iv, f"{name}: text quality", scale=5.0,
            meaning="the LLM judge's expected 1-5 score, mean of CEval's four aspects")}),
        "per_example": {"flipped": [bool(x) for x in per["flipped"]],
                        "probability_change": [float(x) for x in per["probability_change"]],
                        "token_distance": [np.nan if f else x for f, x in zip(failed, per["token_distance"])],
                        "inc@1": inc1, **({} if judge is None else {"text_quality": quality})},
        "counterfactuals": [c[0] for c in chosen],   # what CEval scored: ceval.analyse(texts, these) gives the same numbers
        "chains": [list(c) for c in chains.chains], "chain_labels": [list(x) for x in chains.labels],
        "examples": [{"original": t, "counterfactual": c[0], "flipped": bool(f)}
                     for t, c, f in zip(texts, chosen, per["flipped"]) if f][:3],
    }


def _intervals(iv: nb.Intervals) -> dict:
    """The audit's interval settings as a method analysis takes them (no sample-size sweep)."""
    return {"confidence_level": iv.confidence_level, "n_resamples": iv.n_resamples, "seed": iv.seed,
            "sample_size_sweep": False}


def _entry(results: dict, key: str) -> dict:
    """A method analysis' number as the audit shows it: its interval entry and its reading (no entry: no data)."""
    entry = (results.get("intervals") or {}).get(key)
    if entry is None:
        return {"score": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"), "n": 0,
                "reading": f"{key}: no data."}
    return {**entry, "reading": results.get("readings", {}).get(key, "")}


def counterfactual(clf, texts, options: CounterfactualOptions, iv: nb.Intervals, batch_size: int = 32,
                   progress: bool = False, precision: str = "float32") -> dict:
    """Every editor of ``options.editors`` (unknown ones skipped with a note) on the first ``max_texts`` texts,
    and the paired difference of their flip rates."""
    sub = list(texts[: options.max_texts])
    known = available_editors()
    out = {"n_texts": len(sub), "editors": {}, "skipped": [e for e in options.editors if e not in known]}
    for name in options.editors:
        if name in known:
            out["editors"][name] = one_editor(clf, sub, name, options, iv, batch_size, progress, precision)
    names = list(out["editors"])
    if len(names) >= 2:
        a, b = names[:2]
        out["flip_rate_difference"] = nb.difference(
            [np.nan if x is None else float(x) for x in out["editors"][a]["per_example"]["flipped"]],
            [np.nan if x is None else float(x) for x in out["editors"][b]["per_example"]["flipped"]],
            iv, "flip rate", (a, b))
    return out
