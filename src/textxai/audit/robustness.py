"""The Counterfactual robustness section (CEval + inconsistency) as plain data: per built-in editor the flip
rate, probability change and token distance of its counterfactuals, and inc@1 of its feedback chains.

Each editor is called once per text: the feedback chains' first step reuses the candidates CEval picked from
(:class:`Memo`), so inc@1 costs one more editor call per text.
"""
from __future__ import annotations

import numpy as np

from textxai import ceval
from textxai import inconsistency as inc
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


def available_editors() -> list[str]:
    """The built-in editors' names (``textxai.editors.EDITOR_NAMES``; the LLM editor once it is there)."""
    from textxai.editors import EDITOR_NAMES

    return list(EDITOR_NAMES)


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
    judge = None if options.judge == "none" else options.judge   # read from its probabilities (CEval's 4 aspects)
    res = ceval.compute(texts, [c[0] for c in chosen], model=clf, return_per_example=True, batch_size=batch_size,
                        judge=judge)
    per = res["per_example"]
    failed = [ceval.is_failed(c[0]) for c in chosen]
    flipped = [None if f else bool(x) for f, x in zip(failed, per["flipped"])]
    change = [np.nan if f else x for f, x in zip(failed, per["probability_change"])]
    dist = [np.nan if f else x for f, x in zip(failed, per["token_distance"])]
    if judge is not None:
        from textxai.ceval.judge import QUALITY_ASPECTS

        quality = [float(np.mean([per[a][i] for a in QUALITY_ASPECTS])) for i in range(len(texts))]
    chains = inc.feedback_chains(editor, texts, clf, steps=options.steps, batch_size=batch_size, progress=False)
    scored = inc.compute(chains.chains, n=[1], labels=chains.labels, return_per_example=True)
    inc1 = [float(v[0]) if len(v) else np.nan for v in scored["per_example"]["inc"]]
    return {
        "editor": name, "n_texts": len(texts), "n_failed": int(sum(failed)),
        "flip_rate": nb.rate_estimate(flipped, iv, f"are flipped by the {name} editor's counterfactual", "edited texts"),
        "probability_change": nb.mean_estimate(change, iv, f"{name}: probability change", meaning="the share of probability the edit moves to the contrast class"),
        "token_distance": nb.mean_estimate(dist, iv, f"{name}: token distance", scale=10.0, meaning="words changed per counterfactual"),
        "inc@1": nb.mean_estimate(inc1, iv, f"{name}: inc@1", scale=5.0,
                                  meaning="extra words the editor needs when fed its own edit (0 = consistent)"),
        **({} if judge is None else {"text_quality": nb.mean_estimate(
            quality, iv, f"{name}: text quality", scale=5.0,
            meaning="the LLM judge's expected 1-5 score, mean of CEval's four aspects")}),
        "per_example": {"flipped": flipped, "probability_change": change, "token_distance": dist, "inc@1": inc1,
                        **({} if judge is None else {"text_quality": quality})},
        "counterfactuals": [c[0] for c in chosen],   # what CEval scored: ceval.analyse(texts, these) gives the same numbers
        "examples": [{"original": t, "counterfactual": c[0], "flipped": f}
                     for t, c, f in zip(texts, chosen, flipped) if f][:3],
    }


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
