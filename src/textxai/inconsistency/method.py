"""The inconsistency method's descriptor (:mod:`textxai.registry`): its intervals' values and its work estimate."""
from collections.abc import Sequence

import numpy as np

from textxai import stats
from textxai.estimates import one_edit
from textxai.inconsistency.analysis import analyse
from textxai.inconsistency.options import EditorOptions, ScoreOptions, editor_options
from textxai.registry import Method, register


def _inc_pooling(result, incs, k) -> str:
    """The pooling that produced ``result["inc@k"]``, from its chain and step counts."""
    chains, steps = result.get(f"inc@{k}_chains"), result.get(f"inc@{k}_steps")
    pooled = (sum(len(i) > 0 for i in incs), sum(min(len(i), k) for i in incs))
    reach = sum(len(i) >= k for i in incs)
    if (chains, steps) == pooled or chains is None:
        return "pooled"
    if (chains, steps) == (reach, reach * k):
        return "per_chain"
    raise ValueError(f"result['inc@{k}_chains']={chains} and ['inc@{k}_steps']={steps} match neither pooling of the "
                     f"per-example chains: expected the per_example of the same result")


def estimands(result):
    """inc@n, minimality@n, flip_rate@n and perplexity@n over the chains (resampled by chain)."""
    per = stats.require_values(result, "per_example", "inconsistency", "compute with return_per_example=True")
    incs = [np.asarray(i, dtype=np.float64) for i in per["inc"]]
    dists = [np.asarray(d, dtype=np.float64) for d in per["minimality"]]
    ks = sorted({int(key.split("@")[1]) for key in result
                 if key.split("@")[0] in ("inc", "minimality", "flip_rate", "perplexity") and key.split("@")[-1].isdigit()})
    out = {}
    for k in ks:
        if f"inc@{k}" not in result:
            pass
        elif _inc_pooling(result, incs, k) == "pooled":  # every (chain, step <= k) pair, resampled by chain
            out[f"inc@{k}"] = stats.ratio_estimand([i[:k].sum() for i in incs], [len(i[:k]) for i in incs],
                                                  share=False)   # words, not a share, even when all are 0 or 1
        else:
            out[f"inc@{k}"] = stats.values_estimand([i[:k].mean() if len(i) >= k else np.nan for i in incs])
        if f"minimality@{k}" in result:
            out[f"minimality@{k}"] = stats.values_estimand([d[k - 1] if len(d) >= k else np.nan for d in dists])
        if f"flip_rate@{k}" in result and "labels" in per:
            failed = per.get("failed")
            flips, attempts = [], []
            for c, lab in enumerate(per["labels"]):
                if len(lab) > k:
                    flips.append(float(lab[k] != lab[k - 1]))
                    attempts.append(1.0)
                else:
                    flips.append(0.0)
                    attempts.append(float(failed is not None and bool(failed[c]) and len(lab) == k))
            if failed is None:  # older results: the chains whose editor failed at step k count as unflipped attempts
                extra = int(result.get(f"flip_rate@{k}_chains", 0)) - int(sum(attempts))
                flips, attempts = flips + [0.0] * max(extra, 0), attempts + [1.0] * max(extra, 0)
            out[f"flip_rate@{k}"] = stats.ratio_estimand(flips, attempts, share=True)
        if f"perplexity@{k}" in result and "perplexity" in per:
            out[f"perplexity@{k}"] = stats.values_estimand([p.get(f"@{k}", np.nan) for p in per["perplexity"]])
    return out


def feedback_evaluations(text_words: Sequence[int], steps: int, n_words: int | None = None,
                         n_substitutes: int | None = None, max_words: int | None = None,
                         n_neighbours: int | None = None, editor: str = "substitution", candidates: int = 1) -> int:
    """Inconsistency feedback chains with a built-in editor: per text one prediction, then per step one
    editor call on the chain's last text (:func:`textxai.estimates.one_edit`; an edit
    never adds words) and one prediction per candidate it returns.

    >>> feedback_evaluations([10, 40], steps=2) > feedback_evaluations([10, 40], steps=2, editor="deletion")
    True
    """
    total = 0
    for n in text_words:
        options = {"candidates": candidates} if editor == "llm" else {}
        work, made = one_edit(editor, n, max_words, n_words=n_words, n_substitutes=n_substitutes,
                              n_neighbours=n_neighbours, **options)
        total += 1 + steps * (work + made)
    return int(total)


def estimate(words, options, num_labels=2, device="cpu", pairs=False) -> int:
    """Model evaluations of a run (:func:`feedback_evaluations`): given chains, one prediction
    per text at most; else the chosen built-in editor's feedback steps (the LLM editor's k candidates counted as
    prompt passes and generated tokens)."""

    if options.get("chains"):
        return len(words)
    settings = {k: v for k, v in editor_options(options).items() if k not in ("lm", "prompt")}
    if "num_candidates" in settings:  # the LLM editor: its k rewrites per text, each counted
        settings["candidates"] = settings.pop("num_candidates")
    return feedback_evaluations(words, options["steps"], editor=options["editor"], **settings)


METHOD = register(Method(
    name="inconsistency", kind="metric", order=10,
    comparable=("inc@1", "inc@2", "inc@3", "flip_rate@1"),  # across models (docs/readings.md); the others shown without a verdict
    help="inc@n of a counterfactual editor: feed it its own edits and count how much larger they get",
    flags={"chains": "--chains"},
    inputs={"edits": "edits"}, required=("edits",), unit="chain", estimands=estimands, estimate=estimate,
    option_groups={"scoring": ScoreOptions, "editing": EditorOptions},
    runner="textxai.inconsistency.runner", data_parallel=True, analyse=analyse,
))
