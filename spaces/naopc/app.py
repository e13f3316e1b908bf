"""NAOPC Space: how faithful are a method's word attributions, on the model's own AOPC scale?"""
from __future__ import annotations

import gradio as gr

from textxai import naopc, spaces
from textxai.attribution import METHODS
from textxai.naopc.method import naopc_evaluations

PAPER_URL = "https://arxiv.org/abs/2408.08137"
PAPER_TITLE = "Normalized AOPC: Fixing Misleading Faithfulness Metrics for Feature Attribution Explainability"
MAX_TEXTS = 5
MAX_CHARS = 400
MAX_EXACT_WORDS = 12  # 4096 model calls per text at most on a CPU Space; longer texts get beam limits
MAX_BEAM = 20
DEFAULTS = naopc.NAOPCOptions()
BEAM_SIZE = 5  # the Space's beam width (the library's "beam" default is 1): steadier limits for long texts
DEFAULT_METHOD = "integrated_gradients"
EXAMPLE = ("The big twist undermines everything that came before it.\n"
           "The resort staff remembered our names and made our anniversary feel special.")
DESCRIPTION = (
    "Words are removed one by one (every subword token of a removed word becomes the mask token) and AOPC is "
    "the mean drop of the predicted class probability. Comprehensiveness removes the highest-attributed words "
    "first (higher is better), sufficiency the lowest first (lower is better). Raw AOPC depends on the model, "
    "so NAOPC rescales it between the model's own lower and upper AOPC limits for the text: exact (all word "
    f"subsets) up to {MAX_EXACT_WORDS} words, beam search beyond."
)


def _texts(text) -> list[str]:
    lines = spaces.split_lines(text, "texts")
    return spaces.check_inputs(lines, max_texts=MAX_TEXTS, max_chars=MAX_CHARS, name="texts")


def _fmt(value) -> str:
    return "–" if value is None else f"{value:.6f}"


def summary_html(analysis, method: str) -> str:
    """The means, the analysis's warnings (limits used, nearly coinciding limits) and the per-text table."""
    res = analysis.results["methods"][method]
    rows_data = analysis.results["per_example"][method]
    cells = [("Comprehensiveness ↑", "naopc-comp", res["comprehensiveness"]),
             ("Sufficiency ↓", "naopc-suff", res["sufficiency"]),
             ("NAOPC comprehensiveness ↑", "naopc-ncomp", res["naopc_comprehensiveness"]),
             ("NAOPC sufficiency ↓", "naopc-nsuff", res["naopc_sufficiency"])]
    head = "".join(f"<th>{spaces.escape(name)}</th>" for name, _, _ in cells)
    body = "".join(f'<td><b id="{elem}">{_fmt(v)}</b></td>' for _, elem, v in cells)
    rows = []
    narrow = set(analysis.results["narrow_limit_texts"])
    for i, r in enumerate(rows_data):
        flag = ' class="naopc-narrow" title="limits nearly coincide: NAOPC is meaningless here"' if i in narrow else ""
        rows.append(
            f"<tr{flag}><td>{i + 1}{' ⚠' if i in narrow else ''}</td><td>{r['n_words']}</td><td>{spaces.escape(r['normalization'])}</td>"
            f'<td>{_fmt(r["lower"])}</td><td>{_fmt(r["upper"])}</td>'
            f'<td class="naopc-row-comp">{_fmt(r["comprehensiveness"])}</td><td>{_fmt(r["sufficiency"])}</td>'
            f'<td>{_fmt(r["naopc_comprehensiveness"])}</td><td>{_fmt(r["naopc_sufficiency"])}</td>'
            f"<td>{r['n_evaluations']}</td></tr>"
        )
    per_text = (
        '<table class="naopc-per-text"><tr><th>text</th><th>words</th><th>limits</th><th>lower</th><th>upper</th>'
        "<th>comp.</th><th>suff.</th><th>NAOPC comp.</th><th>NAOPC suff.</th><th>model calls</th></tr>"
        + "".join(rows) + "</table>"
    )
    notes = spaces.warnings_html(analysis.warnings)
    return (f'<div class="naopc-result">{notes}<div>Attribution method: <b>{spaces.escape(method)}</b> — means over '
            f"{len(rows_data)} text(s)</div><table><tr>{head}</tr><tr>{body}</tr></table>"
            f"<div style='margin-top: 0.8em'>{per_text}</div></div>")


def words_html(rows: list, labels: dict) -> str:
    parts = []
    for i, r in enumerate(rows):
        label = f"Text {i + 1}: attribution per word (red = supports {labels.get(r['target'], r['target'])}, blue = against)"
        parts.append(spaces.highlight_words(r["words"], r["attributions"], label=label))
    return "".join(parts)


def analyse_texts(model_choice: str, text: str, method: str, normalization: str = DEFAULTS.normalization, beam_size=BEAM_SIZE):
    """Widgets -> checked inputs -> :func:`textxai.naopc.analyse` (every text's curves); returns (analysis, classifier)."""
    texts = _texts(text)
    if method not in METHODS:
        raise spaces.SpaceError(f"method={method!r}: expected one of {list(METHODS)}")
    beam_size = spaces.integer_input(beam_size, "beam_size", 1, MAX_BEAM)
    if normalization == "exact":
        normalization = "auto"  # capped: texts longer than MAX_EXACT_WORDS fall back to beam
    spaces.check_budget(naopc_evaluations([spaces.approx_words(t) for t in texts], normalization, beam_size,
                                                 MAX_EXACT_WORDS, method),
                        "texts", "use fewer or shorter texts, a smaller beam size or limits 'none'")
    clf = spaces.resolve_model(model_choice)
    analysis = naopc.analyse(texts, clf, attribution_method=method, normalization=normalization, beam_size=beam_size,
                             max_exact_words=MAX_EXACT_WORDS, figures=len(texts))
    spaces.record_result(analysis.summary)
    return analysis, clf


def evaluate_texts(model_choice: str, text: str, method: str, normalization: str = DEFAULTS.normalization, beam_size=BEAM_SIZE):
    """The analysis rendered: numbers and warnings, the highlighted words, the curves with limits, the score bars."""
    import matplotlib.pyplot as plt

    analysis, clf = analyse_texts(model_choice, text, method, normalization, beam_size)
    for fig in analysis.figures.values():
        plt.close(fig)
    rows = analysis.results["per_example"][method]
    one = {**analysis.results["methods"][method], "per_example": rows}
    intervals = spaces.space_intervals_html("naopc", one, keys=["naopc_comprehensiveness", "naopc_sufficiency",
                                                               "comprehensiveness", "sufficiency"])  # over the texts
    curves = analysis.figures.get("curves") or analysis.figures["curves_first_text"]
    return summary_html(analysis, method) + intervals, words_html(rows, clf.labels), curves, analysis.figures["scores"]


def build_demo(default_model: str = spaces.DEFAULT_MODEL) -> gr.Blocks:
    with spaces.space("NAOPC", module="naopc", paper_url=PAPER_URL, paper_title=PAPER_TITLE, description=DESCRIPTION,
                      max_texts=MAX_TEXTS, max_chars=MAX_CHARS) as demo:
        with gr.Row():
            model = spaces.model_dropdown(value=default_model)
            method = gr.Dropdown(list(METHODS), value=DEFAULT_METHOD, label="Attribution method", elem_id="naopc-method")
        text = gr.Textbox(label=f"Texts, one per line (at most {MAX_TEXTS})", value=EXAMPLE, lines=4, elem_id="naopc-text")
        with gr.Row():
            normalization = gr.Radio(["auto", "beam", "none"], value=DEFAULTS.normalization, label="Limits",
                                     info=f"auto = exact up to {MAX_EXACT_WORDS} words, beam search beyond",
                                     elem_id="naopc-normalization")
            beam = spaces.slider(1, MAX_BEAM, value=BEAM_SIZE, step=1, label="Beam size", elem_id="naopc-beam", name="beam_size",
                                 integer=True)
        run = gr.Button("Evaluate", variant="primary", elem_id="naopc-run")
        result = gr.HTML(elem_id="naopc-result")
        words = gr.HTML(elem_id="naopc-words")
        plot = gr.Plot(label="Perturbation curves with the AOPC limit curves", elem_id="naopc-plot")
        scores = gr.Plot(label="Mean scores (error bars: intervals over the texts)", elem_id="naopc-scores")
        result_json = spaces.result_json()
        run.click(spaces.user_errors(spaces.with_result(evaluate_texts)), [model, text, method, normalization, beam],
                  [result, words, plot, scores, result_json])
    return demo


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
