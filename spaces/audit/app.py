"""Audit Space: one report on a classifier (and optionally a second one) for a few pasted or uploaded texts."""
from __future__ import annotations

import html

import gradio as gr

from textxai import spaces
from textxai.audit import SECTIONS, audit, audit_options
from textxai.audit.plan import estimate

MAX_TEXTS = 20
MAX_CHARS = 600
NO_MODEL = "none"
DEFAULT_SECTIONS = ["difficulty", "faithfulness", "trust"]
#: Small stages: a Space request has 90 s on the free tier's 2 cores (the command line's defaults are larger). The
#: default example's warm request, measured with bench/bench_spaces.py (time is model forwards: NAOPC's beam limits
#: 57 %, the FIM test set and TOKI's attack ~20 % each): 6 faithfulness texts, 2 attacked, a test set of 4 took 1,270
#: model evaluations, 84 CPU s on a busy machine; with 3, 1 and 2 here 730 (-43 %), 3.3 s warm and 17.8 s cold on
#: 2 idle cores (docs/performance.md)
SPACE_OPTIONS = {"faithfulness": {"methods": ["omission", "input_x_gradient"], "max_texts": 3, "normalization": "beam"},
                 "trust": {"attack_texts": 1}, "counterfactual": {"max_texts": 4, "editors": ["deletion"]},
                 "difficulty": {"test_set_size": 2, "hardest": 3}, "intervals": {"n_resamples": 999}}
EXAMPLE = ("A gorgeous, moving film with a cast at the top of its game.\tpositive\n"
           "The plot is dull and the acting is lifeless.\tnegative\n"
           "I expected little and was pleasantly surprised by the clever script.\tpositive\n"
           "Two hours of noise, and not one memorable scene.\tnegative\n"
           "The pacing drags in the middle, though the finale is brilliant.\tpositive\n"
           "Forgettable songs and a story that goes nowhere.\tnegative")
DESCRIPTION = ("Is the classifier right for the right reasons? One report from all five methods on the same texts: "
               "accuracy and calibration, difficulty (FIM), faithfulness of explanations (NAOPC), trust (TOKI), "
               "counterfactual robustness, and how they connect. One text per line, optionally followed by a tab and "
               "its label.")


def parse_lines(text: str | None) -> tuple[list[str], list[str] | None]:
    """Texts (and labels when every line has ``text<TAB>label``) from the textbox."""
    lines = spaces.split_lines(text)
    parts = [line.split("\t") for line in lines]
    if parts and all(len(p) == 2 and p[1].strip() for p in parts):
        return [p[0].strip() for p in parts], [p[1].strip() for p in parts]
    return lines, None


def read_upload(path) -> tuple[list[str], list[str] | None]:
    """A CSV / JSONL upload with a ``text`` column and optionally ``label``."""
    rows = spaces.read_upload(path, "upload", max_rows=MAX_TEXTS + 1)   # size checked first; the cap below names it
    if not rows or "text" not in rows[0]:
        raise spaces.SpaceError("upload: expected a column named 'text' (and optionally 'label')")
    texts = [str(r["text"]) for r in rows]
    labels = [str(r["label"]) for r in rows] if all(r.get("label") not in (None, "") for r in rows) else None
    return texts, labels


def run_audit(model_choice: str, compare_choice: str, text: str, upload, sections):
    """The report in the page (an isolated frame) and as a download."""
    texts, labels = read_upload(upload) if upload else parse_lines(text)
    texts = spaces.check_inputs(texts, MAX_TEXTS, MAX_CHARS)
    clf = spaces.resolve_model(model_choice)
    other = None if not compare_choice or compare_choice == NO_MODEL else spaces.resolve_model(compare_choice)
    options = audit_options({**SPACE_OPTIONS, "sections": list(sections or []), "run": {"progress": False}})
    work = sum(sum(estimate(texts, c.num_labels, options, labels is not None).values()) for c in (clf, other) if c)
    spaces.check_budget(work, "texts", "use fewer texts or fewer sections")
    result = audit(clf, texts, labels, compare=other, options=options)
    spaces.record_result(result.data)
    page = result.to_html()
    path = spaces.write_output(page, "audit", ".html")  # the oldest reports pruned (MAX_OUTPUT_FILES kept)
    frame = (f'<iframe id="audit-frame" title="audit report" sandbox="" srcdoc="{html.escape(page, quote=True)}" '
             'style="width:100%;height:1100px;border:1px solid #e5e7eb;border-radius:6px"></iframe>')
    summary = "<ul id='audit-summary'>" + "".join(f"<li>{spaces.escape(x)}</li>" for x in result.summary.splitlines()) + "</ul>"
    return summary, frame, str(path)


def build_demo(default_model: str = spaces.DEFAULT_MODEL) -> gr.Blocks:
    with spaces.space("textxai audit", module="audit", paper_url="https://github.com/textxai",
                      paper_title="the five papers textxai packages", description=DESCRIPTION,
                      max_texts=MAX_TEXTS, max_chars=MAX_CHARS) as demo:
        with gr.Row():
            model = spaces.model_dropdown(value=default_model)
            compare = spaces.model_dropdown(value=NO_MODEL, label="Compare with (optional)",
                                            choices=[NO_MODEL, *spaces.DEMO_MODELS])
        text = gr.Textbox(value=EXAMPLE, lines=7, label=f"Texts, one per line (optional: a tab, then the label); at most {MAX_TEXTS}",
                          elem_id="audit-texts")
        upload = gr.File(label="...or a CSV / JSONL with columns text (and label)", file_types=[".csv", ".jsonl"],
                         elem_id="audit-upload")
        sections = gr.CheckboxGroup([s for s in SECTIONS if s != "overview"], value=DEFAULT_SECTIONS, label="Sections",
                                    elem_id="audit-sections")
        run = gr.Button("Audit", variant="primary", elem_id="audit-run")
        summary = gr.HTML(elem_id="audit-summary-box")
        report = gr.HTML(elem_id="audit-report")
        download = gr.File(label="The report (self-contained HTML)", elem_id="audit-download")
        result_json = spaces.result_json()
        run.click(spaces.user_errors(spaces.with_result(run_audit)), [model, compare, text, upload, sections],
                  [summary, report, download, result_json])
    return demo


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
