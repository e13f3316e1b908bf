"""What the demo models' TOKI keyword indexes learn from: ``textxai demo`` and the Space's index
(``toki.demo.demo_index``) read :func:`index_training`; the audit (its trust stage, its warning when the audited
texts are not the demo's data, its up-front estimate) reads :func:`demo_knowledge`, the ONE function through which
it learns anything demo-specific. Nothing else reads the demo corpus for it.

>>> texts, labels = index_training("textxai/demo-sentiment")
>>> len(texts), len(labels), index_training("my/model")
(60, 60, None)
"""
from __future__ import annotations

from dataclasses import dataclass

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
    corpus = _corpus(model)
    return None if corpus is None else (list(corpus["train_texts"][:n]), list(corpus["train_labels"][:n]))


def corpus_texts(model) -> set[str]:
    """Every packaged text of a demo model's corpus (train, validation, test): what its index's domain is."""
    corpus = _corpus(model)
    return set() if corpus is None else _domain(corpus)


def _corpus(model) -> dict | None:
    """A demo model's packaged corpus (None for any other model)."""
    kind = demo_kind(model)
    if kind is None:
        return None
    from textxai import demo

    return demo.load_corpus(kind)


def _domain(corpus: dict) -> set[str]:
    return {t for split in ("train", "validation", "test") for t in corpus.get(f"{split}_texts", [])}


@dataclass(frozen=True)
class DemoKnowledge:
    """What the audit knows of a demo model: the ``texts`` and ``labels`` its keyword index learns from, and every
    packaged text of its corpus (``domain``: what that index's data is)."""

    texts: tuple
    labels: tuple
    domain: frozenset


def demo_knowledge(model, n: int = INDEX_TEXTS) -> DemoKnowledge | None:
    """Everything demo-specific the audit reads, in one call (``model``: a demo model's name or kind); None for any
    other model.

    >>> k = demo_knowledge("textxai/demo-sentiment")
    >>> len(k.texts), k.texts[0] in k.domain, demo_knowledge("my/model")
    (60, True, None)
    """
    corpus = _corpus(model)
    if corpus is None:
        return None
    return DemoKnowledge(tuple(corpus["train_texts"][:n]), tuple(corpus["train_labels"][:n]), frozenset(_domain(corpus)))
