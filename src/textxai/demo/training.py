"""Fit a classifier the way the demo models are fitted, on your own texts (``textxai.demo.train_classifier``).

It returns a loaded ``textxai.classifier.TextClassifier``, so it sits above the classifier, which in turn
resolves the demo model names through ``textxai.demo``: the classifier (and torch) is imported inside
the function, and ``textxai.demo`` re-exports the function.
"""
from __future__ import annotations

from pathlib import Path

from textxai.validation import check_labels, check_same_length, check_texts


def train_classifier(texts, labels, label_names, out_dir, validation_texts=(), validation_labels=(), **settings):
    """Fit a classifier the way the demo models are fitted, on your own texts, and load it.

    Args:
        texts, labels: training texts and their class indices (``0 .. len(label_names) - 1``).
        label_names: the class names, in index order (the model's ``id2label``).
        out_dir: the folder the model is saved to (``save_pretrained`` format; created if missing).
        validation_texts, validation_labels: optional; a temperature is fitted there (calibration).
        settings: build settings (``textxai.demo._build.BuildOptions`` fields); default the demo recipe,
            ``BUILD_SETTINGS`` with ``FUNCTION_WORDS`` (e.g. ``seed=1`` or ``augment=0``).

    Returns:
        a ``textxai.classifier.TextClassifier`` of the saved model; ``build_info`` of it is in
        ``out_dir / "textxai_demo.json"``. Deterministic under ``seed``. Used e.g. to plant a shortcut word
        in the training texts and check what an explanation method makes of the resulting model.
    """
    from textxai.classifier import as_classifier  # above this package: the classifier resolves the demo names here
    from textxai.demo import BUILD_SETTINGS, FUNCTION_WORDS, _build  # torch only when building

    texts, validation_texts = check_texts(texts, "texts"), list(validation_texts)
    if not isinstance(label_names, (list, tuple)) or len(label_names) < 2 or not all(isinstance(x, str) for x in label_names):
        raise ValueError(f"label_names={label_names!r:.80}: expected a list of at least 2 class names")
    labels = check_labels(labels, "labels", len(texts), len(label_names))
    if validation_texts:
        check_texts(validation_texts, "validation_texts")
    check_same_length(validation_texts, list(validation_labels), "validation_texts", "validation_labels")
    validation_labels = check_labels(list(validation_labels), "validation_labels", len(validation_texts),
                                     len(label_names)) if validation_texts else []
    corpus = {"train_texts": texts, "train_labels": [int(y) for y in labels],
              "validation_texts": validation_texts, "validation_labels": [int(y) for y in validation_labels],
              "test_texts": [], "test_labels": []}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _build.build(corpus, list(label_names), out, **{"function_words": FUNCTION_WORDS, **BUILD_SETTINGS, **settings})
    return as_classifier(str(out))
