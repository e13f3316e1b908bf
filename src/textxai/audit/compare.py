"""``--compare``: every headline number of two models audited on the same texts, as paired differences (units:
the texts; bootstrap interval of the difference of means and the Wilcoxon signed-rank p), and the AOPC vs
NAOPC ranking of the two models (the NAOPC paper's cross-model point).
"""
from __future__ import annotations

import numpy as np

from textxai import readings
from textxai.audit import numbers as nb


def _trust_values(section: dict) -> list:
    return [None if e["label"] is None else float(e["label"]) for e in section["examples"]]


def _rows(a: dict, b: dict) -> list[tuple[str, list, list, bool, bool]]:
    """(what, per-text values of A, of B, higher is better, comparable across models) for every headline number
    both audits have; comparable: as each method declares it in the registry (``Method.comparable``)."""
    rows = []
    if "correct" in a.get("overview", {}) and "correct" in b.get("overview", {}):
        rows.append(("accuracy", a["overview"]["correct"], b["overview"]["correct"], True, True))
    if "difficulty" in a and "difficulty" in b:
        rows.append(("mean log10 difficulty (λ_max)", list(np.log10(a["difficulty"]["difficulty"])),
                     list(np.log10(b["difficulty"]["difficulty"])), False, readings.comparable("fim_difficulty", "summary.mean")))
    if "faithfulness" in a and "faithfulness" in b:
        for m in a["faithfulness"]["methods"]:
            if m in b["faithfulness"]["per_example"]:
                for k in ("comprehensiveness", "naopc_comprehensiveness", "sufficiency", "naopc_sufficiency"):
                    rows.append((f"{m}: {k.replace('_', ' ')}", a["faithfulness"]["per_example"][m][k],
                                 b["faithfulness"]["per_example"][m][k], "comprehensiveness" in k,
                                 readings.comparable("naopc", k)))
    if "trust" in a and "trust" in b:
        rows.append(("TOKI trust (texts both models predict correctly)", _trust_values(a["trust"]),
                     _trust_values(b["trust"]), True, readings.comparable("toki_trust", "trustworthy_rate")))
    if "counterfactual" in a and "counterfactual" in b:
        for name, ea in a["counterfactual"]["editors"].items():
            eb = b["counterfactual"]["editors"].get(name)
            if eb is not None:
                for k in ("flipped", "inc@1"):
                    va = [np.nan if x is None else float(x) for x in ea["per_example"][k]]
                    vb = [np.nan if x is None else float(x) for x in eb["per_example"][k]]
                    ok = readings.comparable("ceval", "flip_rate") if k == "flipped" else readings.comparable("inconsistency", k)
                    rows.append((f"{name}: {'counterfactual flip rate' if k == 'flipped' else k}", va, vb, k != "inc@1", ok))
    return rows


def _aopc_vs_naopc(a: dict, b: dict, names, iv: nb.Intervals) -> list[dict]:
    """Per attribution method, which model NAOPC calls more faithful (only when the paired difference is
    significant), beside the raw AOPC means, which are shown without a verdict: raw AOPC is not comparable across
    models (each model's AOPC lives on its own scale: the NAOPC paper's point, ``Method.comparable``)."""
    out = []
    for m in a["faithfulness"]["methods"]:
        sa, sb = a["faithfulness"]["scores"][m], b["faithfulness"]["scores"].get(m)
        if sb is None or "naopc_comprehensiveness" not in sa or "naopc_comprehensiveness" not in sb:
            continue
        d = nb.difference(a["faithfulness"]["per_example"][m]["naopc_comprehensiveness"],
                          b["faithfulness"]["per_example"][m]["naopc_comprehensiveness"], iv, "NAOPC comprehensiveness", names)
        norm = (names[0] if d["score"] > 0 else names[1]) if nb.significant(d) else None
        raw = (f"raw AOPC {sa['comprehensiveness']['score']:.3f} ({names[0]}) vs {sb['comprehensiveness']['score']:.3f} "
               f"({names[1]}) is shown without a verdict (not comparable across models)")
        said = (f"NAOPC rates {norm} more faithful (paired difference {nb.shown(d)})" if norm else
                f"NAOPC cannot tell the two apart on these texts (paired difference {nb.shown(d)}, n={d['n']})")
        out.append({"method": m, "aopc_better": None, "naopc_better": norm, "flips": None, "naopc_difference": d,
                    "reading": f"{m}: {said}; {raw}."})
    return out


def ece_difference(a: dict, b: dict, iv: nb.Intervals, names=("A", "B")) -> dict:
    """ECE of A minus ECE of B, the texts resampled together (paired bootstrap). ECE is no mean of per-text values,
    so there is no Wilcoxon test: the interval alone decides."""
    from textxai.audit.sections import N_CALIBRATION_BINS

    ece = nb.ece_statistic(N_CALIBRATION_BINS)
    data = tuple(np.asarray(v, dtype=np.float64) for v in (
        np.max(a["overview"]["probs"], 1), a["overview"]["correct"], np.max(b["overview"]["probs"], 1), b["overview"]["correct"]))
    entry = nb.interval(data, lambda ca, ya, cb, yb, axis=-1: ece(ca, ya) - ece(cb, yb), iv)
    entry.update(a=float(ece(data[0], data[1])), b=float(ece(data[2], data[3])), p_value=None,
                 test="none (ECE is not a mean of per-text values: paired bootstrap interval only)")
    entry["reading"] = nb.difference_reading(entry, "expected calibration error (ECE, 10 bins)", names, higher_is_better=False)
    return entry


def compare(a: dict, b: dict, iv: nb.Intervals, names=("A", "B")) -> dict:
    """Paired differences of every headline number (A - B) and the AOPC vs NAOPC ranking of the two models."""
    out = {"names": list(names), "differences": [
        {"what": what, **nb.difference(va, vb, iv, what, names, better, ok)} for what, va, vb, better, ok in _rows(a, b)]}
    if "correct" in a.get("overview", {}) and "correct" in b.get("overview", {}):
        out["differences"].insert(1, {"what": "expected calibration error (ECE, 10 bins)", **ece_difference(a, b, iv, names)})
    if "faithfulness" in a and "faithfulness" in b:
        out["aopc_vs_naopc"] = _aopc_vs_naopc(a, b, names, iv)
    return out
