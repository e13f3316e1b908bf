"""Inconsistency Space: paste a chain of counterfactual edits, or run the built-in editor, and read inc@n."""
from __future__ import annotations

import math
import warnings

import gradio as gr

from textxai import inconsistency as inc
from textxai import spaces, stats
from textxai.editors import EDITOR_NAMES
from textxai.inconsistency.method import feedback_evaluations
from textxai.words import WORD_TOKENIZERS

SCORING = inc.ScoreOptions()  # the library's defaults (word tokenizer, pooling); the Space reports n = 1, 2, 3
MAX_CHAINS = 5
MAX_CHAIN_TEXTS = 12
MAX_EDITOR_TEXTS = 4
MAX_STEPS = 5
EDITOR_MAX_WORDS = 4  # the built-in editor may change up to 4 words at once, so inc can exceed 2

EXAMPLE_CHAIN = "\n".join([
    "The movie was fantastic!",
    "The movie was awful!",
    "The movie was fantastic !",
    "The film was not awful at all, truly fantastic !",
])

EXAMPLE_TEXTS = "\n".join([  # held-out demo-sentiment texts whose edits flip the demo model and read well
    "The pacing drags slightly in the middle, though the brilliant finale more than makes up for it.",
    "The resort staff were dismissive, and our room was not ready until evening.",
])


def parse_chains(text: str) -> list[list[str]]:
    """Chains from a textbox: one text per line, chains separated by a blank line."""
    if text is None or not isinstance(text, str):
        raise spaces.SpaceError(f"chains={text!r:.60}: expected text, one edit per line")
    blocks, current = [], []
    for line in spaces.check_size(text, "chains").splitlines():
        if not spaces.is_blank(line):
            current.append(line.strip())
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    if not blocks:
        raise spaces.SpaceError("chains: nothing given; paste a chain, one text per line (original first)")
    if len(blocks) > MAX_CHAINS:
        raise spaces.SpaceError(f"chains: {len(blocks)} chains given; this Space scores at most {MAX_CHAINS} — "
                                "run textxai locally for more")
    for b, block in enumerate(blocks):
        if len(block) < 2:
            raise spaces.SpaceError(f"chain {b + 1} has 1 text: expected the original and at least one edit, one per line")
        if len(block) > MAX_CHAIN_TEXTS:
            raise spaces.SpaceError(f"chain {b + 1} has {len(block)} texts; this Space accepts at most {MAX_CHAIN_TEXTS}")
        spaces.check_inputs(block, max_texts=MAX_CHAIN_TEXTS, name=f"chain {b + 1}")
    return blocks


def parse_n(text: str) -> list[int]:
    try:
        values = [int(v) for v in str(text).replace(",", " ").split()]
    except ValueError:
        raise spaces.SpaceError(f"n={text!r:.40}: expected positive integers such as 1, 2, 3") from None
    if not values or any(v < 1 or v > 50 for v in values):
        raise spaces.SpaceError(f"n={text!r:.40}: expected positive integers up to 50, such as 1, 2, 3")
    return values


def chains_html(chains, labels=None, label_names=None, word_tokenizer="spacy") -> str:
    label_names = label_names or {}
    out = []
    for c, chain in enumerate(chains):
        texts = inc.check_chain(chain)  # up to the first failed step (None, empty, or its input unchanged)
        d = inc.step_distances(chain, word_tokenizer).tolist()
        steps = inc.step_inconsistency(chain, word_tokenizer).tolist()
        rows = []
        for i, text in enumerate(texts):
            lab = ""
            if labels is not None and i < len(labels[c]) and labels[c][i] is not None:
                lab = spaces.escape(label_names.get(labels[c][i], labels[c][i]))
            body = spaces.escape(text) if i == 0 else spaces.diff_html(texts[i - 1], text, word_tokenizer)
            dist = "" if i == 0 else str(d[i - 1])
            step_inc = "" if i == 0 or i - 1 >= len(steps) else str(steps[i - 1])
            rows.append(f"<tr><td>x{i}</td><td>{lab}</td><td>{dist}</td><td>{step_inc}</td><td>{body}</td></tr>")
        if len(chain) > len(texts):
            rows.append(f"<tr><td>x{len(texts)}</td><td></td><td></td><td></td><td><i>the editor failed (no edit, or its input returned unchanged): the chain ends</i></td></tr>")
        out.append(f"<h4>Chain {c + 1}</h4><table class='textxai-chain'><thead><tr><th>step</th><th>label</th>"
                   "<th>minimality d(x<sub>i-1</sub>, x<sub>i</sub>)</th><th>inc at step i</th><th>text (edits vs the previous"
                   " step)</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")
    return "".join(out)


def _fmt(value) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}"


def summary_html(results: dict, n: list[int]) -> str:
    rows = []
    for k in n:
        flip = _fmt(results.get(f"flip_rate@{k}")) if f"flip_rate@{k}" in results else "–"
        rows.append(
            f'<tr data-n="{k}"><td>{k}</td><td class="inc-value" id="inc-at-{k}">{_fmt(results[f"inc@{k}"])}</td>'
            f'<td>{results[f"inc@{k}_chains"]} / {results[f"inc@{k}_steps"]}</td>'
            f'<td>{_fmt(results[f"minimality@{k}"])}</td><td>{flip}</td></tr>'
        )
    return ("<table id='inconsistency-summary'><thead><tr><th>n</th><th>inc@n ↓</th><th>chains / steps</th>"
            "<th>minimality@n</th><th>flip_rate@n</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
            "<p>inc@n: mean over steps 1..n of relu(d(x<sub>i</sub>, x<sub>i+1</sub>) − d(x<sub>i−1</sub>, x<sub>i</sub>)), "
            "in words. Positive = the editor answered its own edit with a larger one, so a smaller edit existed.</p>")


def why_html(results: dict, label_names=None) -> str:
    """The most inconsistent step explained in words (the paper's eq. 1 on that chain), or that there is none."""
    worst = inc.most_inconsistent(results)
    if worst is None:
        return ("<p id='why'>No step is inconsistent: every time the editor edited its own edit, it changed at most "
                "as many words as the step before.</p>")
    text = inc.explain_step(results, *worst, label_names=label_names)[0]
    c, i = worst
    return f"<p id='why'><b>Chain {c + 1}, step {i}.</b> {spaces.escape(text.split(': ', 1)[1])}</p>"


def _intervals(results: dict, n: list[int]) -> str:
    """Bootstrap intervals over the chains (from 5 chains on), with the analysis' own options (the one default)."""
    keys = [f"{m}@{k}" for k in n for m in ("inc", "flip_rate")]
    return spaces.space_intervals_html("inconsistency", results, keys=keys, options=stats.IntervalOptions())


def render(analysis, n: list[int], label_names=None, word_tokenizer: str = inc.ScoreOptions().word_tokenizer):
    """The three outputs of a handler: summary (numbers, intervals, warnings, the worst step), chains, the plot."""
    results = analysis.results
    summary = (summary_html(results, n) + _intervals(results, n) + spaces.warnings_html(analysis.warnings)
               + why_html(results, label_names))
    chains = chains_html(results["chains"], results.get("labels"), label_names, word_tokenizer)
    return summary, chains, analysis.figures["steps"]


def analyse_chains(text: str, n_text: str, word_tokenizer: str, pooling: str):
    """The :func:`textxai.inconsistency.analyse` of pasted chains (what ``score_chains`` renders)."""
    chains, n = parse_chains(text), parse_n(n_text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # shown from analysis.warnings
        analysis = inc.analyse(chains, n=n, word_tokenizer=word_tokenizer, pooling=pooling)
    spaces.record_result(analysis.summary)
    return analysis


def score_chains(text: str, n_text: str, word_tokenizer: str, pooling: str):
    analysis = analyse_chains(text, n_text, word_tokenizer, pooling)
    return render(analysis, parse_n(n_text), word_tokenizer=word_tokenizer)


def analyse_editor(model_choice: str, text: str, steps: int, n_text: str, word_tokenizer: str, pooling: str,
                   editor_name: str = inc.EditorOptions().editor, progress=None):
    """The :func:`textxai.inconsistency.analyse` of the built-in editor on the texts (what ``run_editor`` renders)."""
    if editor_name not in EDITOR_NAMES:
        raise spaces.SpaceError(f"editor={editor_name!r}: expected one of {list(EDITOR_NAMES)}")
    texts = spaces.check_inputs(spaces.split_lines(text, "texts"), max_texts=MAX_EDITOR_TEXTS)
    steps = spaces.integer_input(steps, "steps", 1, MAX_STEPS)
    n = parse_n(n_text)
    words = [spaces.approx_words(t) for t in texts]
    spaces.check_budget(feedback_evaluations(words, steps, max_words=EDITOR_MAX_WORDS, editor=editor_name,
                                             candidates=inc.EditorOptions().editor_candidates),
                        "texts", "use fewer or shorter texts or fewer steps")
    classifier = spaces.resolve_model(model_choice)
    if progress is not None:
        progress(0, desc="feeding the editor its own output")
    # the LLM editor: the packaged SmolLM2-135M-Instruct (textxai.lm.PACKAGED_LM); the others change <= 4 words
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # shown from analysis.warnings
        analysis = inc.analyse(texts=texts, classifier=classifier, n=n, word_tokenizer=word_tokenizer,
                               pooling=pooling, editor=editor_name, steps=steps, max_words=EDITOR_MAX_WORDS)
    spaces.record_result(analysis.summary)
    return analysis, classifier


def run_editor(model_choice: str, text: str, steps: int, n_text: str, word_tokenizer: str, pooling: str,
               editor_name: str = inc.EditorOptions().editor, progress=gr.Progress()):
    analysis, classifier = analyse_editor(model_choice, text, steps, n_text, word_tokenizer, pooling, editor_name,
                                          progress)
    return render(analysis, parse_n(n_text), classifier.labels, word_tokenizer=word_tokenizer)


with spaces.space(
    "Inconsistency of counterfactual editors",
    module="inconsistency",
    paper_url="https://github.com/geofila/Counterfactuals-of-Counterfactuals",
    paper_title="Counterfactuals of Counterfactuals (Filandrianos et al., Findings of ACL 2023)",
    description=("Feed a counterfactual editor its own edit. If the second edit is larger than the first, a "
                 "smaller one provably existed (the text you started from). inc@n averages that excess, in words, "
                 "over n feedback steps."),
) as demo:
    with gr.Row():
        n_box = gr.Textbox(value="1, 2, 3", label="n (steps to report)", elem_id="n-box")
        tokenizer_radio = gr.Radio(list(WORD_TOKENIZERS), value=SCORING.word_tokenizer, label="Word tokenizer")
        pooling_radio = gr.Radio(list(inc.POOLINGS), value=SCORING.pooling, label="Pooling over chains")
    with gr.Tabs():
        with gr.Tab("Paste a chain"):
            chain_box = gr.Textbox(value=EXAMPLE_CHAIN, lines=8, elem_id="chain-box",
                                   label="Chain: the original, then each edit, one per line (blank line between chains)")
            score_button = gr.Button("Score the chain", variant="primary", elem_id="score-button")
        with gr.Tab("Run the built-in editor"):
            model = spaces.model_dropdown()
            texts_box = gr.Textbox(value=EXAMPLE_TEXTS, lines=4,
                                   label=f"Texts to edit, one per line (at most {MAX_EDITOR_TEXTS})")
            steps_slider = spaces.slider(1, MAX_STEPS, value=3, step=1, label="Feedback steps", name="steps", integer=True)
            editor_radio = gr.Radio(list(EDITOR_NAMES), value=inc.EditorOptions().editor, elem_id="editor-radio",
                                    label="Editor: word substitution (swaps a word back: consistent) or word "
                                          "deletion (cannot restore a deleted word: watch inc)")
            editor_button = gr.Button("Run the editor", variant="primary", elem_id="editor-button")
    summary = gr.HTML(elem_id="summary")
    plot = gr.Plot(label="Minimality and inc per step (paper Fig. 3)")
    chains_view = gr.HTML(elem_id="chains")
    result_json = spaces.result_json()
    score_button.click(spaces.user_errors(spaces.with_result(score_chains)),
                       [chain_box, n_box, tokenizer_radio, pooling_radio], [summary, chains_view, plot, result_json])
    editor_button.click(spaces.user_errors(spaces.with_result(run_editor)),
                        [model, texts_box, steps_slider, n_box, tokenizer_radio, pooling_radio, editor_radio],
                        [summary, chains_view, plot, result_json])


if __name__ == "__main__":
    demo.launch()
