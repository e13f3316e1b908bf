"""NAOPC Space: how faithful are a method's word attributions, on the model's own AOPC scale?"""
from __future__ import annotations

import gradio as gr
import numpy as np

from textxai import naopc, spaces, stats
from textxai.attribution import METHODS

PAPER_URL = "https://arxiv.org/abs/2408.08137"
PAPER_TITLE = "Normalized AOPC: Fixing Misleading Faithfulness Metrics for Feature Attribution Explainability"
MAX_TEXTS = 5
MAX_CHARS = 400
MAX_EXACT_WORDS = 12  # 4096 model calls per text at most on a CPU Space; longer texts get beam limits
MAX_BEAM = 20
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


def summary_html(res: dict, method: str) -> str:
    cells = [("Comprehensiveness ↑", "naopc-comp", res["comprehensiveness"]),
             ("Sufficiency ↓", "naopc-suff", res["sufficiency"]),
             ("NAOPC comprehensiveness ↑", "naopc-ncomp", res["naopc_comprehensiveness"]),
             ("NAOPC sufficiency ↓", "naopc-nsuff", res["naopc_sufficiency"])]
    head = "".join(f"<th>{spaces.escape(name)}</th>" for name, _, _ in cells)
    body = "".join(f'<td><b id="{elem}">{_fmt(v)}</b></td>' for _, elem, v in cells)
    rows = []
    narrow = set(naopc.narrow_limit_texts(res["per_example"]))
    for i, r in enumerate(res["per_example"]):
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
    note = (f"<div class='naopc-narrow-note'>⚠ text(s) {', '.join(str(i + 1) for i in sorted(narrow))}: upper and "
            f"lower limits closer than {naopc.NARROW_LIMITS:g}, the model barely reacts to removing words, so NAOPC "
            "rescales noise there.</div>") if narrow else ""
    return (f'<div class="naopc-result">{note}<div>Attribution method: <b>{spaces.escape(method)}</b> — means over '
            f"{len(res['per_example'])} text(s)</div><table><tr>{head}</tr><tr>{body}</tr></table>"
            f"<div style='margin-top: 0.8em'>{per_text}</div></div>")


def words_html(res: dict, labels: dict) -> str:
    parts = []
    for i, r in enumerate(res["per_example"]):
        label = f"Text {i + 1}: attribution per word (red = supports {labels.get(r['target'], r['target'])}, blue = against)"
        parts.append(spaces.highlight_words(r["words"], r["attributions"], label=label))
    return "".join(parts)


def curves_figure(res: dict):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = res["per_example"]
    fig, axes = plt.subplots(len(rows), 1, figsize=(7, 2.8 * len(rows)), squeeze=False)
    for i, (ax, r) in enumerate(zip(axes[:, 0], rows)):
        k = np.arange(1, r["n_words"] + 1)
        ax.plot(k, r["comprehensiveness_curve"], "o-", color="#4f46e5", label=f"comprehensiveness {r['comprehensiveness']:.3f}")
        ax.plot(k, r["sufficiency_curve"], "o-", color="#f59e0b", label=f"sufficiency {r['sufficiency']:.3f}")
        if r["upper_curve"] is not None:
            ax.plot(k, r["upper_curve"], "--", color="#059669", label=f"upper limit {r['upper']:.3f} ({r['normalization']})")
            ax.plot(k, r["lower_curve"], "--", color="#dc2626", label=f"lower limit {r['lower']:.3f}")
        ax.axhline(0, color="black", lw=0.6)
        ax.set_title(f"text {i + 1}", fontsize=9)
        ax.set_ylabel("p(x) − p(x without k words)", fontsize=8)
        ax.legend(fontsize=7)
    axes[-1, 0].set_xlabel("words removed (k)")
    fig.tight_layout()
    return fig


def evaluate_texts(model_choice: str, text: str, method: str, normalization: str = "auto", beam_size=5):
    """The module's numbers for the texts, the highlighted words and the perturbation curves with limits."""
    texts = _texts(text)
    if method not in METHODS:
        raise spaces.SpaceError(f"method={method!r}: expected one of {list(METHODS)}")
    beam_size = spaces.integer_input(beam_size, "beam_size", 1, MAX_BEAM)
    if normalization == "exact":
        normalization = "auto"  # capped: texts longer than MAX_EXACT_WORDS fall back to beam
    spaces.check_budget(spaces.naopc_evaluations([spaces.approx_words(t) for t in texts], normalization, beam_size,
                                                 MAX_EXACT_WORDS, method),
                        "texts", "use fewer or shorter texts, a smaller beam size or limits 'none'")
    clf = spaces.resolve_model(model_choice)
    res = naopc.compute_naopc(texts, None, clf, attribution_method=method, normalization=normalization,
                              beam_size=beam_size, max_exact_words=MAX_EXACT_WORDS)
    import matplotlib.pyplot as plt

    fig = curves_figure(res)
    plt.close(fig)
    intervals = stats.space_intervals_html("naopc", res, keys=["naopc_comprehensiveness", "naopc_sufficiency",
                                                               "comprehensiveness", "sufficiency"])  # over the texts
    return summary_html(res, method) + intervals, words_html(res, clf.labels), fig


def build_demo(default_model: str = spaces.DEFAULT_MODEL) -> gr.Blocks:
    with spaces.space("NAOPC", module="naopc", paper_url=PAPER_URL, paper_title=PAPER_TITLE, description=DESCRIPTION,
                      max_texts=MAX_TEXTS, max_chars=MAX_CHARS) as demo:
        with gr.Row():
            model = spaces.model_dropdown(value=default_model)
            method = gr.Dropdown(list(METHODS), value=DEFAULT_METHOD, label="Attribution method", elem_id="naopc-method")
        text = gr.Textbox(label=f"Texts, one per line (at most {MAX_TEXTS})", value=EXAMPLE, lines=4, elem_id="naopc-text")
        with gr.Row():
            normalization = gr.Radio(["auto", "beam", "none"], value="auto", label="Limits",
                                     info=f"auto = exact up to {MAX_EXACT_WORDS} words, beam search beyond",
                                     elem_id="naopc-normalization")
            beam = spaces.slider(1, MAX_BEAM, value=5, step=1, label="Beam size", elem_id="naopc-beam", name="beam_size",
                                 integer=True)
        run = gr.Button("Evaluate", variant="primary", elem_id="naopc-run")
        result = gr.HTML(elem_id="naopc-result")
        words = gr.HTML(elem_id="naopc-words")
        plot = gr.Plot(label="Perturbation curves with the AOPC limit curves", elem_id="naopc-plot")
        run.click(spaces.user_errors(evaluate_texts), [model, text, method, normalization, beam], [result, words, plot])
    return demo


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
