"""The audit report: one self-contained HTML page (styles in the page, figures as SVG data URIs with alt text, no
script, no request to any host) rendered from the audit's plain data, with a table of contents, every number
with its interval and a one-line reading.
"""
from __future__ import annotations

import html
import math

from textxai.audit import figures as fg

TITLES = {"overview": "Overview", "difficulty": "Difficulty (FIM)", "faithfulness": "Faithfulness of explanations (NAOPC)",
          "trust": "Trust (TOKI)", "counterfactual": "Counterfactual robustness (CEval + inconsistency)",
          "connections": "Connections", "comparison": "Comparison of the two models"}

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;background:#f8fafc;color:#111827;line-height:1.5}
main{max-width:980px;margin:0 auto;padding:24px 28px 60px;background:#fff}
h1{font-size:1.7em;margin-bottom:0}h2{border-bottom:2px solid #e5e7eb;padding-bottom:4px;margin-top:2.2em}
h3{margin-bottom:.3em}.lead{color:#374151}.reading{margin:.2em 0 .6em;color:#1f2937}
.num{font-variant-numeric:tabular-nums;white-space:nowrap}table{border-collapse:collapse;margin:.5em 0 1em;font-size:.92em}
th,td{border:1px solid #e5e7eb;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f3f4f6}
figure{margin:1em 0;display:inline-block;vertical-align:top}figcaption{font-size:.85em;color:#4b5563;max-width:460px}
nav ol{columns:2}.verdict{background:#eef2ff;border-left:4px solid #4f46e5;padding:6px 10px;margin:.6em 0}
.warn{background:#fffbeb;border-left:4px solid #f59e0b;padding:6px 10px}.ex{font-size:.92em;margin:.4em 0 .8em}
.small{font-size:.85em;color:#4b5563}
"""


def esc(value) -> str:
    return html.escape(str(value), quote=True)


def num(entry) -> str:
    from textxai.render import format_interval

    return f'<span class="num">{esc(format_interval(entry))}</span>' if entry else "-"


def reading(entry) -> str:
    return f'<p class="reading">{esc(entry["reading"])}</p>' if entry and entry.get("reading") else ""


def figure(fig, alt: str, caption: str = "") -> str:
    return (f'<figure><img src="{fg.data_uri(fig)}" alt="{esc(alt)}" style="max-width:100%">'
            f'<figcaption>{esc(caption or alt)}</figcaption></figure>')


def heat(words, scores, label: str = "") -> str:
    from textxai.render import highlight_words  # not textxai.spaces: the library never imports gradio

    return highlight_words(words, scores, label=label or None)


def table(header, rows) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


# ---------------------------------------------------------------------------------------------- sections
#: Errors listed in the report (all of them are in per_text.csv).
MAX_ERRORS = 25


def confusion_table(c: dict) -> str:
    """Rows: gold class; columns: predicted class."""
    return table(["gold \\ predicted"] + c["classes"],
                 [[f"<b>{esc(g)}</b>"] + [str(v) for v in row] for g, row in zip(c["classes"], c["matrix"])])


def errors(s: dict, texts, difficulty: dict | None) -> str:
    """The wrong predictions, each with the words its prediction is most sensitive to (FIM) when that stage ran."""
    errs = s.get("errors") or []
    if not errs:
        return "<h3>Errors</h3><p>None: every prediction is correct.</p>"
    words = (difficulty or {}).get("error_words", {})
    rows = [[f"#{e['index']}", esc(texts[e["index"]]) if texts else "-", esc(e["gold"]), esc(e["predicted"]) +
             f" ({e['confidence']:.2f})", esc(", ".join(words.get(str(e["index"]), []))) or "-"] for e in errs[:MAX_ERRORS]]
    more = f" (the first {MAX_ERRORS} of {len(errs)}; all in per_text.csv)" if len(errs) > MAX_ERRORS else ""
    return (f"<h3>Errors: {len(errs)}{esc(more)}</h3><p>Explanation: the words the prediction is most sensitive to "
            "(FIM's share of the top eigenvector; the difficulty section)" + ("" if words else ": not computed (the "
            "difficulty section did not run)") + ".</p>"
            + table(["#", "text", "gold", "predicted (confidence)", "most sensitive words"], rows))


def overview(s: dict, work: dict, texts=None, difficulty: dict | None = None, planned: dict | None = None) -> str:
    out = [f"<p>{s['n_texts']} texts; predicted: " + esc(", ".join(f"{k} {v}" for k, v in s["predicted_counts"].items()))
           + ".</p>"]
    if "accuracy" in s:
        out += [f"<h3>Accuracy {num(s['accuracy'])}</h3>", reading(s["accuracy"])]
        if "confusion" in s:
            out.append("<p>Confusion matrix (rows: gold label, columns: prediction):</p>" + confusion_table(s["confusion"]))
        out.append(errors(s, texts, difficulty))
        out += [
                f"<h3>Calibration: ECE {num(s['ece'])}</h3>", reading(s["ece"]),
                figure(fg.reliability(s["reliability"]), "Reliability diagram: accuracy against mean confidence in ten "
                       "confidence bins; bars on the diagonal mean well calibrated probabilities.")]
    planned = planned or {}
    rows = [[esc(k), f"{w['seconds']:.1f} s" + (" (resumed from the cache)" if w["cached"] else ""), f"{w['evaluations']:,}",
             "-" if k not in planned.get("evaluations", {}) else
             f"{planned['evaluations'][k]:,} / {planned.get('seconds', {}).get(k, float('nan')):.0f} s"]
            for k, w in work.items()]
    out.append("<h3>Work done</h3>" + table(["stage", "time", "model evaluations (batched calls counted)",
                                             "estimated up front (evaluations / time)"], rows))
    return "".join(out)


def difficulty(s: dict, labels: bool) -> str:
    import numpy as np

    bc = s["beyond_confidence"]
    out = [f"<p>Difficulty is λ<sub>max</sub> of the Fisher information of the input embeddings: high = near the "
           f"decision boundary. Median {s['summary']['median']:.3g}, 90th percentile {s['summary'].get('q90', float('nan')):.3g}.</p>",
           reading(s["mean_log10"]),
           figure(fg.histogram(np.log10(np.maximum(s["difficulty"], 1e-300)), "log10 λ_max"),
                  "Histogram of log10 of the FIM difficulty of the audited texts.")]
    gold = any("gold" in h for h in s["hardest"])
    rows = [[f"{h['difficulty']:.4g}", esc(h["prediction"]) + f" ({h['confidence']:.2f})"]
            + ([esc(h.get("gold", "-")), "✓ correct" if h.get("correct") else "✗ wrong"] if gold else [])
            + ["-" if h.get("min_flip_strength") is None else f"{h['min_flip_strength']:.3g}",
               heat(h["words"], h["sensitivity"])] for h in s["hardest"]]
    out.append("<h3>Hardest examples and their most sensitive words</h3>"
               + table(["λ_max", "prediction"] + (["gold", "correct?"] if gold else [])
                       + ["smallest flipping push (L2)", "words (colour: share of the top eigenvector)"], rows))
    out.append("<h3>What difficulty adds beyond confidence</h3>" + reading(bc["rank_correlation"])
               + reading(bc.get("partial_correlation")) + f'<p class="verdict">{esc(bc["verdict"])}</p>')
    if labels and "accuracy_by_difficulty" in s:
        out.append(figure(fg.side_by_side({"difficulty bin (1 = easiest)": s["accuracy_by_difficulty"],
                                           "confidence bin (1 = most confident)": s["accuracy_by_confidence"]}),
                          "Accuracy with 95% intervals in quarters of the texts by difficulty (left) and by confidence "
                          "(right), side by side: if both fall alike, difficulty tells what confidence already says."))
    t = s["test_set"]
    series = {f"{name} {len(t[key]['indices'])}: {what}": t[key][field] for key, name in (("hard", "hardest"), ("easy", "easiest"))
              for field, what in (("kept", "unchanged"), ("accuracy", "accuracy")) if field in t[key]
              and (field == "kept" or t["reference"] == "labels")}
    out.append("<h3>The FIM test set (paper §5.1)</h3><p>The hardest and easiest texts pushed along their top "
               "eigenvector: the share of predictions left unchanged (and the accuracy) as the push grows. A push that "
               "flips a wrong prediction makes it right, so the accuracy of a set that flips entirely moves toward "
               "1 − its accuracy, not to 0.</p>"
               + figure(fg.curves(t["strengths"], series, "L2 norm of the push", "share"),
                        "FIM test set: share of unchanged predictions and accuracy of the hardest and easiest texts "
                        "against the size of the push along the top eigenvector of the Fisher information."))
    return "".join(out)


def faithfulness(s: dict) -> str:
    methods = s["methods"]
    keys = [k for k in ("comprehensiveness", "sufficiency", "naopc_comprehensiveness", "naopc_sufficiency")
            if k in s["scores"][methods[0]]]
    chosen = f"{s['n_texts']} texts ({esc(s['selection'])})" if "selection" in s else f"{s['n_texts']} texts"
    out = [f"<p>{chosen}. Comprehensiveness ↑ (removing the top words should hurt), sufficiency ↓ "
           "(the top words alone should suffice); NAOPC rescales each text between its lowest and highest possible AOPC.</p>",
           table(["method"] + keys, [[esc(m)] + [num(s["scores"][m][k]) for k in keys] for m in methods])]
    if "naopc_comprehensiveness" in keys:
        out.append(figure(fg.bars({m: s["scores"][m]["naopc_comprehensiveness"] for m in methods}, "NAOPC comprehensiveness"),
                          "NAOPC comprehensiveness of each attribution method with 95% intervals (higher: more faithful)."))
    for k, r in s.get("rankings", {}).items():
        out.append(f"<p class=\"reading\"><b>Ranking by {esc(k.replace('_', ' '))}</b>: {esc(r['reading'])}</p>")
        out += [reading(step) for step in r["steps"]]
    changes = s.get("normalisation_changes") or []
    out.append("<h3>Where normalisation changes the ranking</h3>"
               + ("".join(f"<p class=\"reading\">{esc(c)}</p>" for c in changes) if changes else
                  "<p>Nowhere: AOPC and NAOPC rank the methods alike on these texts.</p>"))
    out.append("<h3>Example explanations</h3>")
    for ex in s["examples"]:
        out.append('<div class="ex">' + "".join(heat(ex["words"], ex["attributions"][m], m) for m in methods) + "</div>")
    return "".join(out)


def trust(s: dict) -> str:
    r = s["rates"]
    out = ([f'<p class="warn">{esc(s["index_warning"])}</p>'] if s.get("index_warning") else []) + [
           f"<p>Keyword index from {esc(s['index_source'])}. Keywords: "
           + esc("; ".join(f"{c}: {', '.join(k[:10])}" for c, k in s["keywords"].items())) + ".</p>",
           f"<h3>Trust rate {num(r['TOKI'])}</h3>", reading(r["TOKI"]), reading(s["untrusted"]),
           reading(s.get("function_words")),
           "<h3>TOKI's three verdicts</h3>",
           table(["verdict", "trustworthy share", "reading"], [[esc(k), num(v), esc(v["reading"])] for k, v in r.items()]),
           figure(fg.bars(r, "trustworthy share"), "Trustworthy share of the correct predictions under TOKI, the Naive "
                  "confidence baseline and TOKI without keyword identification, with 95% intervals."),
           "<p>Agreement:</p>" + "".join(reading(v) for k, v in s["agreement"].items() if k != "table"),
           table(["verdicts", "predictions"], [[esc(k), str(v)] for k, v in s["agreement"]["table"].items()])]
    out.append("<h3>Shortcut candidates</h3>")
    if s["shortcuts"]:
        rows = [[f"<b>{esc(c['word'])}</b>", esc(c["class"]), f"{c['weight']:.2f}", str(c["n_predictions"]),
                 "<br>".join(esc(e["text"]) for e in c["examples"])] for c in s["shortcuts"]]
        out.append("<p>Words unrelated to their class that untrustworthy correct predictions rest on, ranked by how many "
                   "predictions' worth of importance they carry; each rests on at least "
                   f"{s.get('shortcut_min_texts', 1)} distinct texts.</p>"
                   + table(["word", "class", "weight", "predictions", "examples"], rows))
    else:
        out.append(f"<p>None: no word unrelated to its class carries untrustworthy correct predictions in at least "
                   f"{s.get('shortcut_min_texts', 1)} distinct texts.</p>")
    if "attack" in s and s["attack"].get("n_attacked"):
        a = s["attack"]
        out.append("<h3>TOKI-guided attack vs random substitution</h3>" + reading(a["toki"]) + reading(a["random"])
                   + reading(a["difference"]))
        if a.get("meaning_note"):
            out.append(f'<p class="warn">{esc(a["meaning_note"])}</p>')
        edits = a.get("edits", [dict(x, strategy="toki", meaning_kept=True, reasons=[]) for x in a.get("successes", [])])
        if edits:
            rows = [[esc(x["strategy"]), esc(x["original"]) + "<br>→ " + esc(x["adversarial"]),
                     esc(", ".join(f"{w} → {v}" for w, v in x["substitutions"])), f"{x['similarity']:.2f}",
                     "kept" if x["meaning_kept"] else "changed: " + esc("; ".join(x["reasons"]))] for x in edits]
            out.append("<p>Every flipping edit and the meaning check's verdict (only edits that keep the meaning count):</p>"
                       + table(["attack", "edit", "swaps", "similarity", "meaning"], rows))
    return "".join(out)


def counterfactual(s: dict) -> str:
    out = [f"<p>Built-in editors on {s['n_texts']} texts: the best counterfactual per text (CEval), and the editor "
           "fed its own edit (inconsistency).</p>"]
    keys = ("flip_rate", "probability_change", "token_distance", "inc@1")
    out.append(table(["editor"] + list(keys), [[esc(n)] + [num(e[k]) for k in keys] for n, e in s["editors"].items()]))
    for e in s["editors"].values():
        out.append(f"<h3>{esc(e['editor'])}</h3>" + "".join(reading(e[k]) for k in keys))
        out += [f'<p class="ex">{esc(x["original"])}<br>→ {esc(x["counterfactual"])}</p>' for x in e["examples"][:2]]
    if s["editors"]:
        out.append(figure(fg.bars({n: e["flip_rate"] for n, e in s["editors"].items()}, "flip rate"),
                          "Counterfactual flip rate of each editor with 95% intervals."))
    if "flip_rate_difference" in s:
        out.append(reading(s["flip_rate_difference"]))
    if s.get("skipped"):
        out.append(f'<p class="warn">Skipped editors (not installed): {esc(", ".join(s["skipped"]))}</p>')
    return "".join(out)


def connections(s: dict) -> str:
    out = ["<h3>Are the hardest examples the untrustworthy ones?</h3>", reading(s["hard_vs_untrusted"]),
           "<h3>Do the shortcut words flip predictions when removed or replaced?</h3>"]
    if not s["shortcut_flips"]:
        out.append("<p>No shortcut candidate to test.</p>")
    for f in s["shortcut_flips"]:
        out.append(f"<p><b>{esc(f['word'])}</b> (replacements: {esc(', '.join(f['substitutes']) or 'none')}): "
                   f"flip rate {num(f['flip_rate'])}</p>" + reading(f["flip_rate"]))
    return "".join(out)


def comparison(s: dict) -> str:
    a, b = s["names"]
    rows = [[esc(d["what"]), f"{d['a']:.3f}" if _ok(d["a"]) else "-", f"{d['b']:.3f}" if _ok(d["b"]) else "-", num(d),
             "-" if not _ok(d.get("p_value")) else f"{d['p_value']:.2g}", esc(d["reading"].split(": ")[-1])]
            for d in s["differences"]]
    out = [f"<p>Paired over the same texts: A = {esc(a)}, B = {esc(b)}; difference A − B with its 95% bootstrap interval "
           "and the Wilcoxon signed-rank p.</p>", table(["number", "A", "B", "A − B", "p", "reading"], rows)]
    for r in s.get("aopc_vs_naopc", []):
        out.append(f'<p class="reading">{esc(r["reading"])}</p>')
    return "".join(out)


def _ok(x) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


# ---------------------------------------------------------------------------------------------- the page
def profile_note(data: dict) -> str:
    """The options profile the audit ran with, in words ("" for the full audit or an audit.json without one)."""
    from textxai.audit.options import profile_note as note

    options = data.get("options", {})
    return note(options.get("profile", "full"), options)


def headlines(data: dict) -> list[str]:
    """The first readings of each section of the audited model (``AuditResult.summary``)."""
    m = data["models"]["model"]
    note = profile_note(data)
    out = [f"{m['overview']['model']}: {data['n_texts']} texts" + (f" ({note})" if note else "")]
    picks = [m["overview"].get("accuracy"), m["overview"].get("ece"), m.get("difficulty", {}).get("mean_log10"),
             *[r for r in (m.get("trust", {}).get("rates", {}).get("TOKI"),)],
             *[e.get("flip_rate") for e in m.get("counterfactual", {}).get("editors", {}).values()],
             m.get("connections", {}).get("hard_vs_untrusted")]
    out += [p["reading"] for p in picks if p and p.get("reading")]
    if m.get("difficulty"):
        out.append(m["difficulty"]["beyond_confidence"]["verdict"])
    for k, r in m.get("faithfulness", {}).get("rankings", {}).items():
        if k == "naopc_comprehensiveness":
            out.append(r["reading"])
    if m.get("trust", {}).get("shortcuts"):
        out.append("shortcut candidates: " + ", ".join(c["word"] for c in m["trust"]["shortcuts"][:5]))
    for note in (m.get("trust", {}).get("index_warning"), m.get("trust", {}).get("function_words", {}).get("reading"),
                 m.get("trust", {}).get("attack", {}).get("meaning_note")):
        if note:
            out.append(note)
    for d in data.get("comparison", {}).get("differences", []):
        out.append(d["reading"])
    return out


def _section(key: str, body: str) -> str:
    return f'<section id="{key}"><h2>{esc(TITLES[key])}</h2>{body}</section>'


def _model_sections(key: str, data: dict) -> str:
    renderers = {"difficulty": lambda s: difficulty(s, data.get("labels") is not None), "faithfulness": faithfulness,
                 "trust": trust, "counterfactual": counterfactual, "connections": connections}
    parts = []
    for tag, sections in data["models"].items():
        if key in sections:
            head = f"<h3>{esc(sections['overview']['model'])}</h3>" if len(data["models"]) > 1 else ""
            parts.append(head + renderers[key](sections[key]))
    return _section(key, "".join(parts)) if parts else ""


def precision_note(data: dict) -> str:
    """Where the audit did not compute in float32 (``run.precision``), as a clause of the lead sentence.

    >>> precision_note({"precision": {"model": "bfloat16"}})
    '; NAOPC, TOKI and the editors ran their forward passes in bfloat16 (run.precision)'
    >>> precision_note({"precision": {"model": "float32"}}), precision_note({})
    ('', '')
    """
    lower = sorted({p for p in data.get("precision", {}).values() if p != "float32"})
    if not lower:
        return ""
    return f"; NAOPC, TOKI and the editors ran their forward passes in {', '.join(lower)} (run.precision)"


def render(data: dict) -> str:
    """The whole report as one HTML string."""
    m = data["models"]["model"]
    name = m["overview"]["model"] + (f" vs {data['models']['compare']['overview']['model']}" if "compare" in data["models"] else "")
    keys = ["overview"] + [k for k in ("difficulty", "faithfulness", "trust", "counterfactual", "connections")
                           if any(k in s for s in data["models"].values())] + (["comparison"] if "comparison" in data else [])
    toc = "".join(f'<li><a href="#{k}">{esc(TITLES[k])}</a></li>' for k in keys)
    work, profile = data["work"], profile_note(data)
    first = "".join(f"<li>{esc(h)}</li>" for h in headlines(data)[1:])
    over = "".join((f"<h3>{esc(s['overview']['model'])}</h3>" if len(data["models"]) > 1 else "")
                   + overview(s["overview"], work["stages"][t], data.get("texts"), s.get("difficulty"),
                              {"evaluations": work.get("planned", {}).get(t, {}),
                               "seconds": work.get("planned_seconds", {}).get(t, {})})
                   for t, s in data["models"].items())
    skipped = "".join(f"<li>{esc(x)}</li>" for x in data.get("skipped", []))
    body = (f"<h1>Audit of {esc(name)}</h1><p class=\"lead\">Is this classifier right for the right reasons? "
            f"{data['n_texts']} texts, {work['evaluations']:,} model evaluations in {work.get('stage_seconds', work['seconds']):.0f} s"
            + (f" ({work['resumed']} stages resumed from the cache; this run {work['seconds']:.0f} s)" if work.get("resumed") else "")
            + " (textxai audit)" + esc(precision_note(data))
            + (f'. <span class="warn">The {esc(profile)}.</span>' if profile else "")
            + ". [brackets]: 95% confidence intervals: exact (Clopper–Pearson) for counts, bootstrap for the others; "
            "the rules by which a number earns its reading: docs/readings.md.</p>"
            f"<h2>In short</h2><ul>{first}</ul><nav id=\"toc\"><h2>Contents</h2><ol>{toc}</ol></nav>"
            + _section("overview", over + (f"<h3>Skipped</h3><ul>{skipped}</ul>" if skipped else ""))
            + "".join(_model_sections(k, data) for k in keys[1:] if k != "comparison")
            + (_section("comparison", comparison(data["comparison"])) if "comparison" in data else ""))
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
            f'content="width=device-width, initial-scale=1"><title>textxai audit: {esc(name)}</title>'
            f"<style>{STYLE}</style></head><body><main>{body}</main></body></html>")
