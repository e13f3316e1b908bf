"""The audit's first sections, each a function of (classifier, texts, ...) returning plain data (lists, floats,
dicts with readings): Overview (accuracy, calibration), Difficulty (FIM), Faithfulness (NAOPC).

Every section composes the public library functions (``textxai.fim``, ``textxai.naopc``) and puts an interval
and a reading on each number (:mod:`textxai.audit.numbers`).
"""
from __future__ import annotations

import numpy as np

from textxai import fim, naopc, readings
from textxai.estimates import approx_words
from textxai.parallel import split
from textxai.audit import numbers as nb
from textxai.audit.options import DifficultyOptions, FaithfulnessOptions, faithfulness_indices

N_CALIBRATION_BINS = 10


def overview(clf, texts, labels, iv: nb.Intervals, batch_size: int = 32, progress: bool = False) -> dict:
    """Predictions, and with labels accuracy, ECE and the reliability diagram's bins."""
    probs = split(clf.predict_proba, over=("texts",))(texts, batch_size=batch_size, progress=progress)
    pred, conf = probs.argmax(1), probs.max(1)
    out = {"model": clf.name, "class_names": [clf.labels[i] for i in range(clf.num_labels)], "n_texts": len(texts),
           "probs": probs.tolist(), "predictions": pred.tolist(),
           "predicted_counts": {clf.labels[i]: int((pred == i).sum()) for i in range(clf.num_labels)}}
    if labels is None:
        return out
    correct = (pred == np.asarray(labels)).astype(float)
    out["correct"] = correct.tolist()
    out["accuracy"] = nb.rate_estimate(correct, iv, "are correct", "predictions")
    names = out["class_names"]
    out["baseline"] = readings.accuracy_context(labels, pred, names)   # accuracy is read beside it
    out["accuracy"]["reading"] += " Beside it: " + out["baseline"]["reading"] + "."
    out["confusion"] = readings.confusion(labels, pred, names)
    out["errors"] = [{"index": int(i), "gold": names[int(labels[i])], "predicted": names[int(pred[i])],
                      "confidence": float(conf[i])} for i in np.flatnonzero(correct == 0)]
    ece = nb.interval((conf, correct), nb.ece_statistic(N_CALIBRATION_BINS), iv)
    meaning = ("confidence matches accuracy closely" if ece["ci_high"] < 0.05 else
               "the confidence is off by several points on average" if ece["score"] < 0.15 else
               "the confidence is far from the accuracy: do not read probabilities as chances")
    ece["reading"] = nb.reading(ece, "expected calibration error (ECE, 10 bins)", 0.5, meaning)
    out["ece"] = ece
    bins = np.clip((conf * N_CALIBRATION_BINS).astype(int), 0, N_CALIBRATION_BINS - 1)
    out["reliability"] = [{"low": k / N_CALIBRATION_BINS, "high": (k + 1) / N_CALIBRATION_BINS, "n": int((bins == k).sum()),
                           "confidence": float(conf[bins == k].mean()) if (bins == k).any() else None,
                           "accuracy": float(correct[bins == k].mean()) if (bins == k).any() else None}
                          for k in range(N_CALIBRATION_BINS)]
    return out


def _bins(values: np.ndarray, correct: np.ndarray, n_bins: int, iv: nb.Intervals, what: str) -> list[dict]:
    """Accuracy in ``n_bins`` quantile bins of ``values`` (lowest first), each with its interval."""
    order = np.argsort(values, kind="stable")
    out = []
    for k, chunk in enumerate(np.array_split(order, n_bins)):
        if not len(chunk):
            continue
        est = nb.rate_estimate(correct[chunk], iv, "are correct", f"predictions in {what} bin {k + 1}")
        out.append({"low": float(values[chunk].min()), "high": float(values[chunk].max()), "n": len(chunk), "accuracy": est})
    return out


def _most_sensitive(r: dict, i: int, k: int = 3) -> list[str]:
    sens = np.asarray(r["word_sensitivity"][i])
    return [r["words"][i][j] for j in np.argsort(-sens, kind="stable")[:k]]


def _hardest(r: dict, texts, clf, k: int, labels=None) -> list[dict]:
    """The ``k`` hardest texts, with the gold label and whether the prediction is correct when labels are given."""
    d = r["difficulty"]
    out = []
    for i in np.argsort(-d, kind="stable")[:k]:
        sens = np.asarray(r["word_sensitivity"][i])
        row = {"index": int(i), "text": texts[i], "difficulty": float(d[i]),
               "prediction": clf.labels[int(r["predictions"][i])], "confidence": float(r["probs"][i].max()),
               "words": list(r["words"][i]), "sensitivity": sens.tolist(), "most_sensitive": _most_sensitive(r, i)}
        if labels is not None:
            row.update(gold=clf.labels[int(labels[i])], correct=bool(int(labels[i]) == int(r["predictions"][i])))
        out.append(row)
    return out


def _beyond_confidence(log_d, log_margin, correct, iv: nb.Intervals) -> dict:
    """What difficulty adds beyond confidence: their rank correlation (a relation built in: for two classes
    λ_max = p(1−p)·‖∇(z₁−z₀)‖²), and the partial correlation of log λ_max with being wrong, given log p(1−p). The
    verdict says "nothing new" only from the equivalence test (:func:`textxai.readings.no_relation`: the interval
    inside ±0.1); an interval including 0 but reaching past the margin is "no evidence either way"."""
    built_in = readings.BUILT_IN["fim_confidence"]
    rho = nb.correlation(log_d, log_margin, iv, "rank correlation of log λ_max with log p(1−p)", built_in=built_in)
    out = {"rank_correlation": rho}
    verdict = None
    if correct is not None:
        wrong = 1.0 - np.asarray(correct)
        part = nb.correlation(log_d, wrong, iv, "partial correlation of log λ_max with an error, given log p(1−p)",
                              nb.partial_statistic, z=log_margin)
        out["partial_correlation"] = part
        margin = readings.EQUIVALENCE_MARGIN
        if readings.no_relation(part):
            verdict = ("FIM tells nothing new here: once the confidence is known, difficulty does not add to predicting "
                       f"errors (the partial correlation's interval lies inside ±{margin:g}, the equivalence margin).")
        elif not readings.conclusive(part, scale=2.0):
            verdict = None
        elif part["ci_low"] <= 0 <= part["ci_high"]:
            verdict = (f"No evidence either way at n = {part['n']} whether FIM adds anything beyond the confidence: the "
                       f"partial correlation's interval {nb.shown(part)} includes 0 but reaches past ±{margin:g}, the "
                       "equivalence margin of \"no relation\".")
        else:
            verdict = "FIM adds information beyond the confidence: it predicts errors the confidence alone does not."
    if (verdict is None and readings.conclusive(rho, scale=2.0)
            and min(abs(rho["ci_low"]), abs(rho["ci_high"])) >= 0.9):
        verdict = ("Difficulty and confidence rank the texts almost identically, a relation largely built in (for two "
                   "classes λ_max = p(1−p)·‖∇(z₁−z₀)‖²): the ranking by difficulty adds little to the confidence's.")
    out["verdict"] = verdict or "Too little data to say whether FIM adds anything beyond the confidence."
    return out


def difficulty(clf, texts, labels, options: DifficultyOptions, iv: nb.Intervals, progress: bool = False) -> dict:
    """FIM difficulty: distribution, hardest examples with their most sensitive words, accuracy by bins of
    difficulty and of confidence side by side, what difficulty adds beyond confidence, the FIM test set."""
    from textxai.fim.analysis import analyse as fim_analyse

    # the method's own analysis: the difficulties, the words and their sensitivity, mean log10 λ_max and its reading
    analysis = fim_analyse(texts, clf, batch_size=options.batch_size, return_eigenvector=True, progress=progress,
                           shard=lambda fn: split(fn, over=("texts", "text_pairs")), top=options.hardest, figures=False,
                           intervals={"confidence_level": iv.confidence_level, "n_resamples": iv.n_resamples,
                                      "seed": iv.seed, "sample_size_sweep": False})
    r = {"difficulty": np.asarray(analysis.results["difficulty"]), "probs": np.asarray(analysis.results["probs"]),
         "predictions": np.asarray(analysis.results["predictions"]), "words": analysis.summary["words"],
         "word_sensitivity": analysis.summary["word_sensitivity"]}
    d = r["difficulty"]
    p = r["probs"].max(1)
    log_d = np.log(np.maximum(d, 1e-300))
    log_margin = np.log(np.maximum(p * (1 - p), 1e-300))
    correct = None if labels is None else (r["predictions"] == np.asarray(labels)).astype(float)
    out = {"difficulty": d.tolist(), "summary": analysis.results["summary"], "mean_log10": analysis.results["mean_log10"],
           "hardest": _hardest(r, texts, clf, options.hardest, labels),
           "beyond_confidence": _beyond_confidence(log_d, log_margin, correct, iv)}
    hard_idx = [h["index"] for h in out["hardest"]]
    flips = split(fim.min_flip_strength, over=("texts",))([texts[i] for i in hard_idx], clf, batch_size=options.batch_size)
    for h, s in zip(out["hardest"], flips):
        h["min_flip_strength"] = float(s) if np.isfinite(s) else None
    if correct is not None:   # each error's explanation: the words its prediction is most sensitive to (FIM)
        out["error_words"] = {str(int(i)): _most_sensitive(r, int(i), 5) for i in np.flatnonzero(correct == 0)}
        out["accuracy_by_difficulty"] = _bins(d, correct, options.bins, iv, "difficulty")
        out["accuracy_by_confidence"] = _bins(-p, correct, options.bins, iv, "confidence")  # least confident last
    out["test_set"] = fim.perturbed_test_set(texts, clf, labels, size=options.test_set_size,
                                             strengths=options.strengths, difficulty_values=d,
                                             batch_size=options.batch_size)
    return out


def _ranking(per: dict, methods: list[str], metric: str, iv: nb.Intervals) -> dict:
    """Methods ranked by ``metric`` (comprehensiveness: higher is better; sufficiency: lower), each neighbour
    pair with its paired difference, and whether the ranking is significant all the way down."""
    better_high = metric.endswith("comprehensiveness")
    means = {m: float(np.mean(nb.finite(per[m][metric]))) for m in methods}
    order = sorted(methods, key=lambda m: -means[m] if better_high else means[m])
    steps = [nb.difference(per[a][metric], per[b][metric], iv, metric.replace("_", " "), (a, b), better_high)
             for a, b in zip(order, order[1:])]
    apart = {(a, b): nb.significant(st) for (a, b), st in zip(zip(order, order[1:]), steps)}
    groups, text = readings.shared_order(order, means, lambda a, b: apart.get((a, b), False), better_high)
    significant = all(apart.values())
    reading = (f"{text} by {metric.replace('_', ' ')}" + (": every step significant." if significant else
               ": '=' joins methods these texts cannot tell apart (the paired interval includes 0, the paired test "
               f"does not agree, or fewer than {readings.MIN_N} texts), so they share a rank."))
    return {"order": order, "groups": groups, "steps": steps, "significant": bool(significant), "reading": reading}


def _selection(chosen: list[int], n: int, options: FaithfulnessOptions) -> str:
    """How the section's texts were chosen, as the report says it."""
    if len(chosen) == n:
        return f"all {n} texts"
    if not options.max_words or chosen == list(range(len(chosen))):
        return f"the first {len(chosen)} of the {n} texts"
    return (f"{len(chosen)} of the {n} texts: the first of at most {options.max_words} words, else the shortest "
            "(NAOPC's limits cost ~N^1.5 model inputs of N words; --faithfulness.max_words 0 takes the first texts)")


def faithfulness(clf, texts, options: FaithfulnessOptions, iv: nb.Intervals, batch_size: int = 32,
                 progress: bool = False, precision: str = "float32") -> dict:
    """AOPC and NAOPC comprehensiveness / sufficiency of each attribution method, with intervals, the ranking
    and its significance, where normalisation changes the ranking, heat-mapped example explanations
    (``precision``: of the AOPC curves and NAOPC limits, :class:`textxai.naopc.NAOPCOptions`)."""
    from textxai.naopc.analysis import analyse as naopc_analyse, ranking_flips

    chosen = faithfulness_indices([approx_words(t) for t in texts], options)
    sub = [texts[i] for i in chosen]
    methods = list(options.methods)
    opts = naopc.NAOPCOptions(normalization=options.normalization, max_exact_words=options.max_exact_words,
                              batch_size=batch_size, progress=progress, precision=precision)
    # the method's own analysis: its per-text scores, its intervals and readings (figures are the audit's)
    analysis = naopc_analyse(sub, clf, {m: None for m in methods}, options=opts, figures=False,
                             intervals={"confidence_level": iv.confidence_level, "n_resamples": iv.n_resamples,
                                        "seed": iv.seed, "sample_size_sweep": False})
    res = analysis.results["per_example"]
    keys = ("comprehensiveness", "sufficiency", "naopc_comprehensiveness", "naopc_sufficiency")
    per = {m: {k: [np.nan if row.get(k) is None else row[k] for row in res[m]] for k in keys} for m in methods}
    normalized = all(np.isfinite(per[m]["naopc_comprehensiveness"]).any() for m in methods)
    out = {"n_texts": len(sub), "indices": chosen, "selection": _selection(chosen, len(texts), options),
           "methods": methods, "per_example": per, "scores": {}, "rankings": {}}
    for m in methods:
        shown = analysis.results["methods"][m]
        out["scores"][m] = {k: {**shown["intervals"][k], "reading": shown["readings"][k]}
                            for k in keys if (normalized or not k.startswith("naopc")) and k in shown.get("intervals", {})}
    for k in keys if normalized else keys[:2]:
        if len(methods) >= 2:
            out["rankings"][k] = _ranking(per, methods, k, iv)
    if normalized and len(methods) >= 2:
        shaped = {"methods": {m: {k: analysis.results["methods"][m][k] for k in keys} for m in methods},
                  "comparisons": {f"{a} vs {b}": {f"naopc_{k}": nb.difference(
                      per[a][f"naopc_{k}"], per[b][f"naopc_{k}"], iv, k) for k in keys[:2]}
                      for i, a in enumerate(methods) for b in methods[i + 1:]}}
        out["normalisation_changes"] = ranking_flips(shaped)
        out["rank_agreement"] = {k: naopc.rank_agreement([shaped["methods"][m][k] for m in methods],
                                                         [shaped["methods"][m][f"naopc_{k}"] for m in methods])
                                 for k in keys[:2]}
    first = res[methods[0]]
    out["examples"] = [{"index": chosen[i], "text": sub[i], "words": list(first[i]["words"]),
                        "attributions": {m: list(res[m][i]["attributions"]) for m in methods}}
                       for i in range(min(options.examples, len(sub)))]
    return out
