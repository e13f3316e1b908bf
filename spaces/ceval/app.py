"""CEval Space: score counterfactual texts (flip, probability change, token distance with a word diff,
diversity, perplexity), one original at a time or a whole CSV."""
from __future__ import annotations

import math

import gradio as gr

from textxai import ceval, spaces
from textxai import lm as lm_module
from textxai.ceval.method import ceval_evaluations
from textxai.editors import EDITOR_NAMES
from textxai.llm_editor import DEFAULTS as LLM_DEFAULTS

MAX_COUNTERFACTUALS = 6
MAX_ROWS = 100
# the packaged SmolLM2-135M-Instruct (offline, a 135 M Q4_1 model: rough perplexities) first, then the paper's GPT-2
LM_CHOICES = ("none", "textxai/smollm2-135m-instruct", "distilgpt2", "gpt2")
DEFAULT_LM = LM_CHOICES[1] if lm_module.packaged_lm_file() else "none"
# the LLM judge of text quality (CEval's four aspects), read from its probabilities over the scores 1-5 (every text
# scored, one forward pass per text and aspect): off by default (4 forwards per counterfactual)
JUDGE_CHOICES = ("none", lm_module.PACKAGED_LM)
# the editors that write counterfactuals for the original: the LLM editor (k = 4 candidates, the classifier choosing)
# when the packaged LM is installed
DEFAULT_EDITOR = "llm" if lm_module.packaged_lm_file() else "substitution"
EXAMPLE_ORIGINAL = "The acting was wooden and the jokes fell flat."
# one counterfactual the demo model follows (0.56 positive) and one it does not (0.53 negative: "landed" is not
# praise enough for it), so the example shows what flip rate and probability change each measure
EXAMPLE_COUNTERFACTUALS = ("The acting was superb and the jokes were hilarious.\n"
                           "The acting was superb and the jokes landed.")


def _fmt(value, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.{digits}f}"


def resolve_lm(choice):
    """None for "none"; else a causal LM under the Space's model rules (its listed choices work when hosted)."""
    return spaces.resolve_lm(choice, listed=LM_CHOICES[1:])


def resolve_judge(choice):
    """None for "none"; else the judge LM under the Space's model rules (read from its probabilities)."""
    return spaces.resolve_lm(choice, listed=JUDGE_CHOICES[1:], argument="judge")


def _named(choice) -> bool:
    return str(choice or "").strip() not in ("", "none")


def summary_html(analysis, diversity=None) -> str:
    """The means, the contrast class and the analysis's warnings (failed generations, NaN means, the judge)."""
    results = analysis.results
    rows = [
        ("flip-rate", "Flip rate ↑", _fmt(results.get("flip_rate"))),
        ("probability-change", "Probability change ΔP ↑", _fmt(results.get("probability_change"))),
        ("token-distance", "Token distance ↓", _fmt(results.get("token_distance"), 2)),
        ("token-distance-normalized", "Token distance / original length ↓", _fmt(results.get("token_distance_normalized"))),
    ]
    if diversity is not None:
        rows.append(("diversity", "Diversity (mean pairwise distance) ↑", _fmt(diversity, 2)))
    if "perplexity" in results:
        rows.append(("perplexity", "Perplexity ↓", _fmt(results.get("perplexity"), 2)))
    if "text_quality" in results:   # the LLM judge: expected score 1-5 from its probabilities, per aspect
        rows.append(("text-quality", "Text quality (LLM judge, 1–5) ↑", _fmt(results.get("text_quality"), 2)))
        rows += [(aspect, f"&nbsp;&nbsp;{aspect}", _fmt(results.get(aspect), 2)) for aspect in ceval.QUALITY_ASPECTS]
    body = "".join(f'<tr><td>{label}</td><td id="{key}">{value}</td></tr>' for key, label, value in rows)
    notes = spaces.warnings_html(analysis.warnings)
    return (f"<table id='ceval-summary'><tbody>{body}</tbody></table>{notes}"
            f"<p>Contrast class c′: {spaces.escape(results.get('contrast'))} — ΔP = p(c′|x′) − p(c′|x).</p>")


def examples_html(original: str, counterfactuals, results: dict, label_names=None) -> str:
    per = results["per_example"]
    names = label_names or {}
    rows = []
    for i, cf in enumerate(counterfactuals):
        failed = ceval.is_failed(cf)
        lab = per.get("counterfactual_label", [None] * len(counterfactuals))[i]
        lab = "" if lab is None or failed else spaces.escape(names.get(lab, lab))
        flipped = per.get("flipped", [None] * len(counterfactuals))[i]
        dp = per.get("probability_change", [float("nan")] * len(counterfactuals))[i]
        dist = per["token_distance"][i]
        ppl = per.get("perplexity", [None] * len(counterfactuals))[i]
        text = "<i>failed generation</i>" if failed else spaces.diff_html(original, cf, keep_whitespace=True)
        rows.append(f'<tr class="cf-row"><td>x′{i + 1}</td><td class="cf-label">{lab}</td>'
                    f'<td class="cf-flipped">{"yes" if flipped else "no"}</td><td class="cf-dp">{_fmt(dp)}</td>'
                    f'<td class="cf-distance">{_fmt(dist, 0)}</td><td class="cf-ppl">{_fmt(ppl, 2)}</td>'
                    f'<td class="cf-text">{text}</td></tr>')
    orig_label = per.get("original_label", [None])[0]
    head = (f"<p>Original prediction: <b id='original-label'>{spaces.escape(names.get(orig_label, orig_label))}</b></p>"
            if orig_label is not None else "")
    return (head + "<table id='ceval-examples'><thead><tr><th></th><th>label</th><th>flipped</th><th>ΔP</th>"
            "<th>distance</th><th>perplexity</th><th>edits (removed struck out, inserted green)</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


def analyse_one(model_choice: str, original: str, counterfactuals_text: str, lm_choice: str, judge_choice: str = "none"):
    """Widgets -> checked inputs -> :func:`textxai.ceval.analyse` of each counterfactual against the original."""
    original = spaces.check_inputs([original or ""], max_texts=1, name="original")[0].strip()
    counterfactuals = spaces.split_lines(counterfactuals_text, "counterfactuals")
    if not counterfactuals:
        raise spaces.SpaceError("counterfactuals: none given; enter at least one counterfactual, one per line")
    if len(counterfactuals) > MAX_COUNTERFACTUALS:
        raise spaces.SpaceError(f"counterfactuals: {len(counterfactuals)} given; this Space accepts at most "
                                f"{MAX_COUNTERFACTUALS} — run textxai locally for more")
    spaces.check_inputs(counterfactuals, max_texts=MAX_COUNTERFACTUALS, name="counterfactuals")
    spaces.check_budget(ceval_evaluations(len(counterfactuals), len(counterfactuals), lm=_named(lm_choice),
                                          judge=_named(judge_choice)), "counterfactuals", "score fewer")
    classifier = spaces.resolve_model(model_choice)
    lm, judge = resolve_lm(lm_choice), resolve_judge(judge_choice)
    analysis = ceval.analyse([original] * len(counterfactuals), counterfactuals, classifier, lm=lm, judge=judge)
    spaces.record_result(analysis.summary)
    return analysis, original, counterfactuals, classifier


def score_one(model_choice: str, original: str, counterfactuals_text: str, lm_choice: str, judge_choice: str = "none"):
    analysis, original, counterfactuals, classifier = analyse_one(model_choice, original, counterfactuals_text, lm_choice,
                                                                  judge_choice)
    diversity = ceval.diversity([counterfactuals])[0] if len(counterfactuals) >= 2 else None
    return (summary_html(analysis, diversity), examples_html(original, counterfactuals, analysis.results, classifier.labels),
            _histogram(analysis))


def analyse_generated(model_choice: str, original: str, editor_name: str, k, lm_choice: str = "none",
                      judge_choice: str = "none"):
    """The original -> ``k`` counterfactuals by a built-in editor (:func:`textxai.ceval.generate`; the LLM editor with
    its defaults, :data:`textxai.llm_editor.DEFAULTS`: at least 4 candidates, the classifier keeping the k best) ->
    :func:`textxai.ceval.analyse`, the work of both checked against the Space's budget first."""
    from textxai.estimates import approx_words

    if editor_name not in EDITOR_NAMES:
        raise spaces.SpaceError(f"editor={editor_name!r}: expected one of {list(EDITOR_NAMES)}")
    original = spaces.check_inputs([original or ""], max_texts=1, name="original")[0].strip()
    k = spaces.integer_input(k, "counterfactuals per text", 1, MAX_COUNTERFACTUALS)
    candidates = max(k, LLM_DEFAULTS["num_candidates"]) if editor_name == "llm" else k
    spaces.check_budget(ceval_evaluations(1, k, [approx_words(original)], lm=_named(lm_choice), judge=_named(judge_choice),
                                          editor=editor_name, editor_candidates=candidates),
                        "original", "use a shorter text or fewer counterfactuals")
    classifier = spaces.resolve_model(model_choice)
    lm, judge = resolve_lm(lm_choice), resolve_judge(judge_choice)
    counterfactuals = ceval.generate([original], classifier, editor_name, k=k)[0]
    analysis = ceval.analyse([original] * len(counterfactuals), counterfactuals, classifier, lm=lm, judge=judge)
    spaces.record_result(analysis.summary)
    return analysis, original, counterfactuals, classifier


def generate_one(model_choice: str, original: str, editor_name: str, k, lm_choice: str = "none",
                 judge_choice: str = "none"):
    analysis, original, counterfactuals, classifier = analyse_generated(model_choice, original, editor_name, k,
                                                                        lm_choice, judge_choice)
    return (summary_html(analysis), examples_html(original, counterfactuals, analysis.results, classifier.labels),
            _histogram(analysis), "\n".join(counterfactuals))


def _histogram(analysis):
    """The analysis's probability histogram (the paper's Fig. 1), None without probabilities; the others closed."""
    import matplotlib.pyplot as plt

    for name, fig in analysis.figures.items():
        if name != "probability_histogram":
            plt.close(fig)
    return analysis.figures.get("probability_histogram")


def read_csv(path) -> tuple[list[str], list[list[str]]]:
    """Originals and counterfactual lists from an uploaded CSV (columns orig_text, gen_text[, gen_text_2, ...])."""
    if path is None:
        raise spaces.SpaceError("csv: no file uploaded; upload a CSV with columns orig_text and gen_text")
    rows = spaces.read_upload(path, "csv", max_rows=MAX_ROWS)  # size checked before reading, rows while reading
    columns = list(rows[0].keys())
    if "orig_text" not in columns or "gen_text" not in columns:
        raise spaces.SpaceError(f"csv: columns {columns[:8]}: expected orig_text and gen_text (and optionally gen_text_2, ...)")
    extra = sorted((c for c in columns if c and c.startswith("gen_text_")), key=lambda c: (len(c), c))
    originals = [r["orig_text"] or "" for r in rows]
    spaces.check_inputs(originals, max_texts=MAX_ROWS, name="orig_text")
    cfs = [[r["gen_text"]] + [r[c] for c in extra] for r in rows]
    for i, row in enumerate(cfs):
        spaces.check_inputs([c or "" for c in row] + ["x"], max_texts=MAX_ROWS, name=f"row {i + 1} counterfactuals")
    return originals, cfs


def analyse_csv(model_choice: str, path, lm_choice: str, judge_choice: str = "none"):
    """The uploaded CSV checked -> :func:`textxai.ceval.analyse`; returns (analysis, originals, counterfactuals)."""
    originals, cfs = read_csv(path)
    for i, text in enumerate(originals):
        if not text.strip():
            raise spaces.SpaceError(f"orig_text of row {i + 1} is empty: expected the original text")
    spaces.check_budget(ceval_evaluations(len(originals), sum(len(row) for row in cfs), lm=_named(lm_choice),
                                          judge=_named(judge_choice)), "csv", "score fewer rows")
    classifier = spaces.resolve_model(model_choice)
    lm, judge = resolve_lm(lm_choice), resolve_judge(judge_choice)
    analysis = ceval.analyse(originals, cfs, classifier, lm=lm, judge=judge)
    spaces.record_result(analysis.summary)
    return analysis, originals, cfs


def score_csv(model_choice: str, path, lm_choice: str, judge_choice: str = "none"):
    analysis, originals, cfs = analyse_csv(model_choice, path, lm_choice, judge_choice)
    results = analysis.results
    per = results["per_example"]
    keys = [k for k in ("original_label", "counterfactual_label", "flipped", "contrast_class", "original_contrast_prob",
                        "counterfactual_contrast_prob", "probability_change", "token_distance",
                        "token_distance_normalized", "diversity", "perplexity") if k in per]
    rows = [[originals[i], cfs[i][0]] + ["" if _nan(per[k][i]) else per[k][i] for k in keys] for i in range(len(originals))]
    path = spaces.write_csv(rows, ["orig_text", "gen_text"] + keys, "ceval")  # formula cells escaped, old files pruned
    summary = summary_html(analysis, results.get("diversity")) + f"<p id='rows-scored'>{len(originals)} rows scored.</p>"
    summary += spaces.space_intervals_html("ceval", results, keys=["flip_rate", "probability_change", "token_distance",
                                                                  "diversity", "perplexity", "text_quality"])  # over the originals
    return summary, path, _histogram(analysis)


def _nan(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def build_demo(default_model: str = spaces.DEFAULT_MODEL) -> gr.Blocks:
    with spaces.space(
        "CEval: counterfactual text metrics",
        module="ceval",
        paper_url="https://aclanthology.org/2024.inlg-main.6",
        paper_title="CEval: A Benchmark for Evaluating Counterfactual Text Generation (Nguyen et al., INLG 2024)",
        description=("Does a counterfactual flip the classifier, how far does it move the probability of the contrast "
                     "class, how many tokens did it change, how different are several counterfactuals of the same text, "
                     "and how natural is it (perplexity)?"),
    ) as demo:
        with gr.Row():
            model = spaces.model_dropdown(value=default_model)
            lm = gr.Dropdown(list(LM_CHOICES), value=DEFAULT_LM, label="Language model for perplexity", allow_custom_value=True,
                             info="'none', or a causal LM Hub id (GPT-2 in the paper); needs the Hub")
            judge = gr.Dropdown(list(JUDGE_CHOICES), value="none", label="LLM judge of text quality", allow_custom_value=True,
                                elem_id="ceval-judge",
                                info="CEval's four 1-5 questions, read from the judge's probabilities (4 forwards a text)")
        with gr.Tabs():
            with gr.Tab("One original"):
                original = gr.Textbox(value=EXAMPLE_ORIGINAL, lines=3, label="Original text", elem_id="ceval-original")
                counterfactuals = gr.Textbox(value=EXAMPLE_COUNTERFACTUALS, lines=4, elem_id="ceval-counterfactuals",
                                             label=f"Counterfactuals, one per line (at most {MAX_COUNTERFACTUALS}; '-1' = failed)")
                run = gr.Button("Score", variant="primary", elem_id="ceval-run")
                with gr.Row():
                    editor = gr.Radio(list(EDITOR_NAMES), value=DEFAULT_EDITOR, label="Editor", elem_id="ceval-editor",
                                      info=f"llm: the packaged SmolLM2-135M-Instruct, {LLM_DEFAULTS['num_candidates']} "
                                           "candidates, the classifier choosing")
                    k = spaces.slider(1, MAX_COUNTERFACTUALS, value=1, step=1, label="Counterfactuals", integer=True,
                                      name="counterfactuals per text", elem_id="ceval-k")
                    run_editor = gr.Button("Generate with the editor and score", elem_id="ceval-generate")
            with gr.Tab("Batch CSV"):
                upload = gr.File(label=f"CSV with columns orig_text, gen_text (optional gen_text_2, ...); at most {MAX_ROWS} rows",
                                 file_types=[".csv"], elem_id="ceval-upload")
                run_csv = gr.Button("Score the CSV", variant="primary", elem_id="ceval-run-csv")
                download = gr.File(label="Per-row results (CSV)", elem_id="ceval-download")
        summary = gr.HTML(elem_id="ceval-summary-box")
        examples = gr.HTML(elem_id="ceval-examples-box")
        plot = gr.Plot(label="p(contrast class): original vs counterfactual (paper Fig. 1)")
        result_json = spaces.result_json()
        run.click(spaces.user_errors(spaces.with_result(score_one)), [model, original, counterfactuals, lm, judge],
                  [summary, examples, plot, result_json])
        run_editor.click(spaces.user_errors(spaces.with_result(generate_one)), [model, original, editor, k, lm, judge],
                         [summary, examples, plot, counterfactuals, result_json])
        run_csv.click(spaces.user_errors(spaces.with_result(score_csv)), [model, upload, lm, judge],
                      [summary, download, plot, result_json])
    return demo


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
