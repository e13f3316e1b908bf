"""What the demo models' TOKI keyword indexes learn from: the ONE function every caller reads (``textxai demo`` and
the Space's index, ``toki.demo.demo_index``; the audit's trust stage and its up-front estimate). Nothing else reads
the demo corpus for it.

>>> texts, labels = index_training("textxai/demo-sentiment")
>>> len(texts), len(labels), index_training("my/model")
(60, 60, None)
"""
from __future__ import annotations

#: The demo models by name and the kind of their packaged corpus.
DEMO_MODELS = {"textxai/demo-sentiment": "sentiment", "textxai/demo-topic": "topic"}
#: Training texts of a demo model's keyword index (its packaged training corpus, in order).
INDEX_TEXTS = 60


def demo_kind(model) -> str | None:
    """``"sentiment"`` / ``"topic"`` for a demo model's name (or kind), else None."""
    name = str(model)
    return name if name in DEMO_MODELS.values() else DEMO_MODELS.get(name)


def index_training(model, n: int = INDEX_TEXTS) -> tuple[list[str], list[int]] | None:
    """The first ``n`` training texts and labels of a demo model's packaged corpus (``model``: its name or kind);
    None for any other model."""
    kind = demo_kind(model)
    if kind is None:
        return None
    from textxai import demo

    corpus = demo.load_corpus(kind)
    return list(corpus["train_texts"][:n]), list(corpus["train_labels"][:n])


def corpus_texts(model) -> set[str]:
    """Every packaged text of a demo model's corpus (train, validation, test): what its index's domain is."""
    kind = demo_kind(model)
    if kind is None:
        return set()
    from textxai import demo

    corpus = demo.load_corpus(kind)
    return {t for split in ("train", "validation", "test") for t in corpus.get(f"{split}_texts", [])}
