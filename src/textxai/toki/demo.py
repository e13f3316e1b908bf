"""The keyword indexes of the demo models (``textxai demo``, the Space's default, tests and benches share them)."""
from __future__ import annotations


def demo_index(kind: str, n_train: int = 60, progress: bool = False):
    """``(classifier, keyword index)`` of ``textxai/demo-<kind>``: omission explanations of the first ``n_train``
    training texts of its packaged corpus, every embedder voting (the Space's defaults: one cached index for
    both)."""
    from textxai.classifier import as_classifier
    from textxai.demo.index_texts import index_training
    from textxai.embeddings import EMBEDDER_NAMES
    from textxai.toki.index import ExplainOptions, IndexOptions, cached_keyword_index

    clf = as_classifier(f"textxai/demo-{kind}")
    texts, labels = index_training(kind, n_train)
    index = cached_keyword_index(clf, texts, labels,
                                 explain=ExplainOptions("omission", progress=progress),
                                 index=IndexOptions(embedders=list(EMBEDDER_NAMES)))
    return clf, index


def demo_attack_options():
    """The attack settings of ``textxai demo`` and of the Space's attack tab: a fifth of the words, sentence
    cosine 0.7 (looser than A2T's 0.1 / 0.8, the :class:`AttackOptions` defaults: the demo texts are short)."""
    from textxai.toki.attack import AttackOptions

    return AttackOptions(max_rate=0.2, min_similarity=0.7)
