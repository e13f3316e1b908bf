"""TOKI trust Space: is a prediction made for the right reasons? And the TOKI-guided attack."""
from __future__ import annotations

import threading

import gradio as gr

from textxai import demo as demo_models
from textxai import spaces, toki
from textxai.attribution import REGISTRY
from textxai.embeddings import EMBEDDER_NAMES
from textxai.toki.method import toki_evaluations

MAX_TRAIN = 200
SPACE_SAMPLES = 500  # sampling explainers (LIME, Kernel SHAP) run with this many samples here


def explainer_choices() -> dict[str, dict]:
    """The explainers offered, from the one attribution registry (``textxai.attribution.REGISTRY``): a new
    method appears here by itself. Sampling methods are labelled with the samples they use in the Space."""
    out = {}
    for name, method in REGISTRY.items():
        if method.family == "sampling":
            out[f"{name} ({SPACE_SAMPLES} samples)"] = {"n_samples": SPACE_SAMPLES}
        else:
            out[name] = {}
    return out


EXPLAINERS = explainer_choices()
ATTACK = toki.demo_attack_options()  # the attack tab's preset: the demo's settings
RELATED, UNRELATED = "#16a34a", "#dc2626"
_LOCK = threading.Lock()
_INDEXES: dict = {}


def demo_train_rows(choice: str) -> list[tuple[int, str]]:
    """The packaged training texts of a demo model (first 60)."""
    corpus = demo_models.load_corpus(choice)
    return list(zip(corpus["train_labels"], corpus["train_texts"]))[:60]


def _class(classifier, label: str, name: str) -> int:
    """``label`` (a class index or name) as the class index (``TextClassifier.class_index``), else a SpaceError."""
    try:
        return classifier.class_index(label.strip(), name)
    except ValueError as error:
        raise spaces.SpaceError(str(error)) from None


def parse_train(text: str | None, classifier) -> list[tuple[int, str]]:
    """Training lines ``label<TAB>text`` (label: index or class name)."""
    rows = []
    for i, line in enumerate(spaces.split_lines(text, "training texts")):
        if "\t" not in line:
            raise spaces.SpaceError(f"training line {i + 1} {line[:40]!r}: expected 'label<TAB>text'")
        label, body = line.split("\t", 1)
        rows.append((_class(classifier, label, f"training line {i + 1}: label"), body.strip()))
    if len(rows) > MAX_TRAIN:
        raise spaces.SpaceError(f"{len(rows)} training lines; this Space accepts at most {MAX_TRAIN}")
    spaces.check_inputs([b for _, b in rows] or [""], max_texts=MAX_TRAIN, name="training texts")
    return rows


def settings(explainer: str, embedders) -> tuple[str, dict, list[str]]:
    if explainer not in EXPLAINERS:
        raise spaces.SpaceError(f"explainer={explainer!r}: expected one of {list(EXPLAINERS)}")
    embedders = [embedders] if isinstance(embedders, str) else list(embedders or [])
    if not embedders:
        raise spaces.SpaceError("embedders: choose at least one word embedder")
    unknown = [e for e in embedders if e not in EMBEDDER_NAMES]
    if unknown:
        raise spaces.SpaceError(f"embedders={unknown!r:.80}: expected some of {list(EMBEDDER_NAMES)}")
    return explainer.split(" ")[0], EXPLAINERS[explainer], embedders


def keyword_index(model_choice: str, train_text: str | None, explainer: str, embedders):
    """The classifier and its keyword index (demo corpus for demo models, else the pasted training texts)."""
    classifier = spaces.resolve_model(model_choice)
    method, options, embs = settings(explainer, embedders)
    if train_text and train_text.strip():
        rows = parse_train(train_text, classifier)
        spaces.check_budget(toki_evaluations([spaces.approx_words(b) for _, b in rows], [], method,
                                                    options.get("n_samples")),
                            "training texts", "paste fewer training texts or choose the omission / gradient explainer")
    elif str(model_choice).startswith("textxai/demo-"):
        rows = demo_train_rows(model_choice)
    else:
        raise spaces.SpaceError("training texts: paste labelled training texts (label<TAB>text per line) for this model")
    with _LOCK:
        # class names, not indices: with classes named '1'..'5' the library reads a number as the class it names
        index = toki.cached_keyword_index(classifier, [b for _, b in rows], [classifier.labels[y] for y, _ in rows],
                                          explain=toki.ExplainOptions(method, options or None),
                                          index=toki.IndexOptions(embedders=embs))
    return classifier, index, rows, method, options, embs


def _label_index(label: str | None, classifier, predicted: int) -> int:
    if label is None or not str(label).strip():
        return predicted
    return _class(classifier, str(label), "true label")


def words_html(top_words) -> str:
    spans = []
    for w, s, r in top_words:
        color, kind = (RELATED, "related") if r else (UNRELATED, "unrelated")
        spans.append(f'<span class="toki-word toki-{kind}" title="{kind}, importance {s:.4g}" style="border-bottom: 3px solid '
                     f'{color}; padding: 1px 3px; margin: 2px;">{spaces.escape(w)} <small>{s:.3f}</small></span>')
    return " ".join(spans) or "<i>no word contributes positively</i>"


def assess_analysis(model_choice: str, text: str, true_label: str, train_text: str, explainer: str, embedders):
    """Widgets -> options -> :func:`textxai.toki.analyse` of one text: ``(analysis, classifier, keyword index,
    true class)``."""
    text = spaces.check_inputs([text], max_texts=1)[0]
    classifier, index, _, method, options, embs = keyword_index(model_choice, train_text, explainer, embedders)
    y = _label_index(true_label, classifier, int(classifier.predict([text])[0]))
    analysis = toki.analyse([text], [classifier.labels[y]], model=classifier, keyword_index=index,
                            explain=toki.ExplainOptions(method, options or None), index=toki.IndexOptions(embedders=embs))
    spaces.record_result(analysis.summary)
    return analysis, classifier, index, y


def assess_text(model_choice: str, text: str, true_label: str, train_text: str, explainer: str, embedders):
    """Prediction, explanation with related / unrelated words, the verdict and the analysis's warnings; the class
    keywords; the trust-rate figure (TOKI and both baselines)."""
    analysis, classifier, index, y = assess_analysis(model_choice, text, true_label, train_text, explainer, embedders)
    out = analysis.summary
    label, reason = out["trust_labels"][0], out["reasons"][0]
    if label is None:
        verdict = "not assessed (wrong prediction)" if reason == "wrong prediction" else spaces.escape(reason)
    else:
        verdict = "trustworthy" if label else "untrustworthy"
    head = (f"<p>Prediction: <b id='toki-prediction'>{spaces.escape(classifier.labels[out['predictions'][0]])}</b> "
            f"({out['confidences'][0]:.2f})</p><p>Verdict: <b id='toki-verdict'>{verdict}</b>")
    if out["is_rel"][0] is not None:
        head += f" — IS<sub>rel</sub> = {out['is_rel'][0]:.4f}, IS<sub>unr</sub> = {out['is_unr'][0]:.4f}"
    head += "</p>"
    body = (f"<p>Top words (<span style='color:{RELATED}'>related</span> / "
            f"<span style='color:{UNRELATED}'>unrelated</span> to '{spaces.escape(index.class_names[y])}'):</p>"
            f"<div id='toki-words'>{words_html(out['top_words'][0])}</div>") if out["is_rel"][0] is not None else ""
    kws = "".join(f"<li><b>{spaces.escape(name)}</b>: {spaces.escape(', '.join(words[:20]) or '—')}</li>"
                  for name, words in out["keywords"].items())
    theta = ", ".join(f"{k} {v:.3f}" for k, v in out["theta_relate"].items())
    return (head + body + spaces.warnings_html(analysis.warnings),
            f"<p>Keywords per class (θ_relate: {spaces.escape(theta)}):</p><ul id='toki-keywords'>{kws}</ul>",
            analysis.figures.get("trust_rates"))


def attack_text(model_choice: str, text: str, train_text: str, explainer: str, embedders, max_rate: float,
                min_similarity: float):
    text = spaces.check_inputs([text], max_texts=1)[0]
    max_rate = spaces.number_input(max_rate, "max_rate", 0.0, 1.0)  # the library's ranges (toki.check_unit)
    min_similarity = spaces.number_input(min_similarity, "min_similarity", -1.0, 1.0)
    spaces.check_budget(toki_evaluations([], [], "omission", attack_words=[spaces.approx_words(text)],
                                                max_rate=max_rate),
                        "text", "shorten the text or lower the share of words changed")  # before any model call
    classifier, index, _, _, _, embs = keyword_index(model_choice, train_text, explainer, embedders)
    res = toki.toki_attack(classifier, [text], index, embedders=embs, max_rate=max_rate, min_similarity=min_similarity)
    r = res["examples"][0]
    before, after = classifier.labels[r.label], classifier.labels[int(classifier.predict([r.adversarial])[0])]
    status = "succeeded" if r.success else "failed"
    subs = ", ".join(f"{a} → {b}" for a, b in r.substitutions) or "none"
    return (f"<p>Attack <b id='toki-attack-status'>{status}</b>: {spaces.escape(before)} → {spaces.escape(after)}, "
            f"{r.n_perturbations} substitution(s) ({spaces.escape(subs)}), sentence similarity {r.similarity:.3f}</p>"
            f"<p id='toki-diff'>{spaces.diff_html(text, r.adversarial)}</p>")


DEFAULT_TEXT = "A wonderful film with a great cast and a moving story."
#: The attack tab's prefilled text: a held-out demo-sentiment review that one near-synonym flips (the attack's
#: point: "brilliant" -> "pretty", sentence similarity 0.98); the strongly worded DEFAULT_TEXT resists it.
ATTACK_TEXT = "The pacing drags slightly in the middle, though the brilliant finale more than makes up for it."
#: The prefilled examples on textxai/demo-sentiment (omission, its packaged training texts, all embedders):
#: a prediction made for the right reasons ("great", "wonderful": trustworthy) and a neutral sentence the model
#: calls positive with p = 0.97 because of "home", "we", "at" — words unrelated to "positive" (untrustworthy;
#: the Naive confidence baseline would trust it). tests/test_toki_space.py checks both verdicts.
EXAMPLES = [(DEFAULT_TEXT, "trustworthy"), ("We watched the sequel at home.", "untrustworthy")]


def build_demo(default_model: str = spaces.DEFAULT_MODEL, default_train: str = "", default_text: str = DEFAULT_TEXT,
               default_embedders=EMBEDDER_NAMES, default_attack: str = ATTACK_TEXT) -> gr.Blocks:
    """The Space (``default_*`` preset the inputs; tests point it at a local model)."""
    with spaces.space(
        "TOKI: right for the right reasons?",
        module="toki_trust",
        paper_url="https://doi.org/10.5281/zenodo.13751580",
        paper_title="Automated Trustworthiness Oracle Generation for Machine Learning Text Classifiers (TOKI)",
        description=("A prediction is trustworthy when the words that drove it are related to the predicted class. "
                     "TOKI finds each class's keywords in the model's own explanations of its training texts, then "
                     "weighs the related against the unrelated top words of a prediction."),
    ) as blocks:
        with gr.Row():
            model = spaces.model_dropdown(value=default_model, elem_id="model")
            explainer_radio = gr.Radio(list(EXPLAINERS), value="omission", label="Explainer")
            embedders_box = gr.CheckboxGroup(list(EMBEDDER_NAMES), value=list(default_embedders),
                                             label="Word embedders")
        train_box = gr.Textbox(value=default_train, lines=3, elem_id="train-box",
                               label=(f"Training texts, 'label<TAB>text' per line (at most {MAX_TRAIN}); leave empty "
                                      "for a demo model (its packaged corpus)"))
        with gr.Tabs():
            with gr.Tab("Assess a prediction"):
                text_box = gr.Textbox(value=default_text, lines=3, elem_id="text-box", label="Text")
                label_box = gr.Textbox(value="", elem_id="label-box",
                                       label="True label (optional; empty = take the prediction as correct)")
                gr.Examples([[t] for t, _ in EXAMPLES], [text_box], label="Examples (demo-sentiment): right for the "
                            "right reasons / resting on unrelated words", elem_id="toki-examples")
                assess_button = gr.Button("Assess", variant="primary", elem_id="assess-button")
                verdict_html = gr.HTML(elem_id="verdict")
                keywords_html = gr.HTML(elem_id="keywords")
                rates_plot = gr.Plot(label="Trustworthy share: TOKI and the Naive / TOKI(-K.I) baselines", elem_id="toki-rates")
            with gr.Tab("TOKI-guided attack"):
                attack_box = gr.Textbox(value=default_attack, lines=3, elem_id="attack-box", label="Text to attack")
                with gr.Row():
                    rate = spaces.slider(0.05, 0.5, value=ATTACK.max_rate, step=0.05,
                                         label="Maximum share of words changed", name="max_rate")
                    sim = spaces.slider(0.0, 1.0, value=ATTACK.min_similarity, step=0.05,
                                        label="Minimum sentence similarity (MiniLM)", name="min_similarity")
                attack_button = gr.Button("Attack", variant="primary", elem_id="attack-button")
                attack_html = gr.HTML(elem_id="attack")
        result_json = spaces.result_json()
        assess_button.click(spaces.user_errors(spaces.with_result(assess_text)),
                            [model, text_box, label_box, train_box, explainer_radio, embedders_box],
                            [verdict_html, keywords_html, rates_plot, result_json])
        attack_button.click(spaces.user_errors(attack_text),
                            [model, attack_box, train_box, explainer_radio, embedders_box, rate, sim], [attack_html])
    return blocks


demo = build_demo()


if __name__ == "__main__":
    demo.launch()
