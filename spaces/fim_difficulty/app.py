"""FIM difficulty Space: how close a text sits to the classifier's decision boundary, and which words matter."""
from __future__ import annotations

import math

import gradio as gr
import numpy as np

from textxai.loading import LRUCache
from textxai import fim, spaces
from textxai.fim.method import fim_evaluations

PAPER_URL = "https://arxiv.org/abs/2010.07212"
PAPER_TITLE = "Geometry Matters: Exploring Language Examples at the Decision Boundary"
MAX_CHARS = 1500
MAX_STRENGTH = 100.0  # the slider reaches 3 x the flip strength, at most 60
MAX_FLIP = 20.0  # the min-flip search reaches further than the paper's 6: it sets the slider's range
EXAMPLE = "The acting was fine and the music lovely, but the plot dragged and I nearly fell asleep."
DESCRIPTION = (
    "Difficulty = the largest eigenvalue λ_max of the Fisher information metric of the input embeddings: how "
    "fast the predicted distribution changes under the worst small move of the text's embeddings. High = near "
    "the decision boundary, where a meaningless substitution may flip the label. Words are colored by how much "
    "of the top eigenvector lies on them; the slider moves the embeddings along it."
)

_CORPUS = LRUCache(maxsize=4)  # bounded: one reference distribution per model named, the least recent dropped


def corpus_texts(kind: str = "sentiment", split: str = "test") -> list[str]:
    """The packaged demo corpus texts (the test split of the sentiment or topic corpus)."""
    from textxai import demo

    return demo.load_corpus(kind)[f"{split}_texts"]


def corpus_difficulty(model_choice: str, clf) -> np.ndarray:
    """Difficulties of the demo corpus under this model (computed once per model, then cached)."""
    key = str(model_choice).strip()  # " textxai/demo-topic" is the topic model, with the topic corpus
    kind = "topic" if key == "textxai/demo-topic" else "sentiment"
    return _CORPUS.get_or_create(key, lambda: np.sort(fim.difficulty(corpus_texts(kind), clf, batch_size=16)["difficulty"]))


def percentile(value: float, reference: np.ndarray) -> float:
    """Share (in %) of reference values <= value."""
    return 100.0 * float(np.searchsorted(reference, value, side="right")) / len(reference)


def _text(text) -> str:
    texts = spaces.check_inputs([text or ""], max_texts=1, max_chars=MAX_CHARS, name="text")
    return texts[0].strip()


def _probs_dict(clf, probs) -> dict:
    return {clf.labels[i]: float(p) for i, p in enumerate(probs)}


def options() -> fim.FIMOptions:
    """The Space's analysis: the eigenvector (words colored) and the min-flip search up to ``MAX_FLIP``."""
    return fim.FIMOptions(return_eigenvector=True, min_flip=True, max_strength=MAX_FLIP)


def analyse(model_choice: str, text: str):
    """The text's :func:`textxai.fim.analyse` (what ``textxai run fim_difficulty --min-flip --max-strength 20`` gives
    on it), within the Space's work budget."""
    text = _text(text)
    clf = spaces.resolve_model(model_choice)  # loaded, not called: its classes set the work
    opts = options()
    reference = 0 if str(model_choice).strip() in _CORPUS else len(corpus_texts())
    spaces.check_budget(fim_evaluations(1 + reference, clf.num_labels, min_flip=True, max_strength=opts.max_strength,
                                               tol=opts.tol), "model", "choose a model with fewer classes")
    analysis = fim.analyse([text], clf, options=opts, top=1, intervals=None, figures=False)
    spaces.record_result(analysis.summary)
    return clf, analysis


def _warnings_html(warnings) -> str:
    """The analysis' warnings, one line each (the sentences ``textxai run`` writes and the module returns)."""
    return f'<div id="fim-warnings">{spaces.warnings_html(warnings)}</div>' if warnings else ""


def score(model_choice: str, text: str):
    """Difficulty HTML, colored words, probabilities and the slider reset (its range set by the flip strength)."""
    clf, analysis = analyse(model_choice, text)
    results = analysis.results
    lam = results["difficulty"][0]
    ref = corpus_difficulty(model_choice, clf)
    pct = percentile(lam, ref)
    flip = results["min_flip_strength"][0]
    probs = np.asarray(results["probs"][0])
    label = clf.labels[results["predictions"][0]]
    flip_text = f"{flip:.3g}" if math.isfinite(flip) else f"> {MAX_FLIP:g}"
    html = (
        f'<div class="fim-result"><div style="font-size: 1.4em">λ<sub>max</sub> = '
        f'<b id="fim-score">{lam:.6g}</b></div>'
        f'<div>Percentile among {len(ref)} demo texts: <b id="fim-percentile">{pct:.0f}</b> '
        f"(100 = hardest). Prediction: <b>{spaces.escape(label)}</b> ({probs.max():.2f}).</div>"
        f'<div>Smallest push along the eigenvector that flips the prediction: <b id="fim-flip">{flip_text}</b> '
        f"(L2 norm in embedding space).</div>{_warnings_html(analysis.warnings)}</div>"
    )
    words = spaces.highlight_words(analysis.summary["words"][0], analysis.summary["word_sensitivity"][0],
                                   label="Sensitivity per word (share of the top eigenvector on the word's tokens)")
    top = 3.0 * flip if math.isfinite(flip) else MAX_FLIP
    slider = gr.Slider(minimum=0.0, maximum=round(max(top, 0.05), 3), value=0.0, step=round(max(top, 0.05) / 100, 5))
    return html, words, _probs_dict(clf, probs), slider


def push(model_choice: str, text: str, strength: float):
    """Class probabilities after moving the embeddings by ``strength`` along the top eigenvector."""
    text = _text(text)
    clf = spaces.resolve_model(model_choice)
    strength = spaces.number_input(strength, "strength", 0.0, MAX_STRENGTH)
    probs = fim.perturb_along_eigenvector(text, clf, [strength])[0]
    return _probs_dict(clf, probs)


def build_demo(default_model: str = spaces.DEFAULT_MODEL) -> gr.Blocks:
    with spaces.space("FIM Difficulty", module="fim_difficulty", paper_url=PAPER_URL, paper_title=PAPER_TITLE,
                      description=DESCRIPTION, max_texts=1, max_chars=MAX_CHARS) as demo:
        model = spaces.model_dropdown(value=default_model)
        text = gr.Textbox(label="Text", value=EXAMPLE, lines=3, elem_id="fim-text")
        run = gr.Button("Score", variant="primary", elem_id="fim-run")
        with gr.Row():
            with gr.Column(scale=3):
                result = gr.HTML(elem_id="fim-result")
                words = gr.HTML(elem_id="fim-words")
            with gr.Column(scale=2):
                strength = spaces.slider(0.0, 6.0, value=0.0, step=0.06, label="Push along the top eigenvector (L2)",
                                         elem_id="fim-strength", name="strength")
                probs = gr.Label(label="Class probabilities", elem_id="fim-probs")
        result_json = spaces.result_json()
        run.click(spaces.user_errors(spaces.with_result(score)), [model, text], [result, words, probs, strength,
                                                                                  result_json])
        strength.release(spaces.user_errors(push), [model, text, strength], probs)
    return demo


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
