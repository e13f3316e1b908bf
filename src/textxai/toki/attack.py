"""The TOKI-guided word-substitution attack (§4) and the attack as an editor."""
from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from textxai.toki.assess import relate_words
from textxai.toki.core import check_unit, cosine_matrix
from textxai.toki.index import KeywordIndex, _check_labels, check_index
from textxai.validation import short_repr
from textxai.progress import progress_bar

# ----------------------------------------------------------------------------- the TOKI-guided attack (§4)
def _is_word(w: str) -> bool:
    return any(ch.isalnum() for ch in w)


def _replace(text: str, spans, i: int, new: str) -> str:
    _, start, end = spans[i]
    return text[:start] + new + text[end:]


def substitution_candidates(index: KeywordIndex, word: str, c: int, embedders: Sequence, n_neighbors: int = 10,
                            n_candidates: int = 5) -> tuple[bool, list[str]]:
    """§4: replacements for ``word`` in a text predicted ``c``, best first, and whether ``word`` is related to c.

    Related word -> the ``n_neighbors`` keywords of ``c`` most similar to it, lowest importance first.
    Unrelated word -> the ``n_neighbors`` non-keywords of the OTHER classes most similar to it, highest
    importance first. Similarity is the mean cosine over the embedders. ``n_candidates`` are returned.
    """
    w = word.lower()
    related = bool(relate_words(index, [w], c, embedders)[0])
    if related:
        pool = [(k, index.pools[c][k]) for k in index.keyword_list(c) if k != w]
        sign = 1.0
    else:
        best: dict[str, float] = {}
        for other in index.pools:
            if other == c:
                continue
            for k in index.non_keywords(other):
                if k != w and _is_word(k):
                    best[k] = max(best.get(k, -np.inf), index.pools[other][k])
        pool = sorted(best.items())
        sign = -1.0
    pool = [(k, s) for k, s in pool if _is_word(k)]
    if not pool:
        return related, []
    words = [k for k, _ in pool]
    sims = np.mean([cosine_matrix(e.embed([w]), e.embed(words))[0] for e in embedders], axis=0)
    near = sorted(range(len(words)), key=lambda j: (-sims[j], words[j]))[:n_neighbors]
    ranked = sorted(near, key=lambda j: (sign * pool[j][1], -sims[j], words[j]))
    return related, [words[j] for j in ranked[:n_candidates]]


@dataclass
class AttackResult:
    original: str
    adversarial: str
    label: int
    success: bool | None           # None: the original prediction was wrong, not attacked
    n_perturbations: int
    similarity: float
    chain: list[str]
    substitutions: list[tuple[str, str]]


def _budget(n_words: int, max_rate: float, min_words: int) -> int:
    return max(min_words, int(math.floor(max_rate * n_words)))


def toki_attack(classifier, texts, keyword_index, labels=None, embedders=None, max_rate: float = 0.1,
                min_words: int = 2, min_similarity: float = 0.8, n_neighbors: int = 10, n_candidates: int = 5,
                strategy: str = "toki", seed: int = 0, batch_size: int = 32, progress: bool = False,
                sentence_embedder=None) -> dict:
    """The TOKI-guided word-substitution attack (§4), greedy over gradient word importance as A2T.

    For each text (attacked only where the prediction equals ``labels`` when given): words are visited in
    decreasing gradient importance; each candidate substitution (:func:`substitution_candidates`) is
    tried, those whose MiniLM sentence-embedding cosine with the original is below ``min_similarity``
    are dropped, and the one lowering the original class probability most is kept when it lowers it at
    all. At most ``max(min_words, floor(max_rate * n_words))`` words change (A2T: 0.1 and 2). The attack
    stops when the prediction changes.

    ``strategy="random"`` is the baseline: random word positions (under ``seed``) and random replacement
    words from all pools, same budget and constraints.

    Returns ``{"examples": [AttackResult...], "attack_success_rate", "avg_perturbations" (over successful
    attacks), "avg_similarity" (successful attacks), "n_attacked"}``.
    """
    from textxai import words as _words
    from textxai.attribution import word_attributions
    from textxai.classifier import as_classifier
    from textxai.embeddings import MiniLMEmbedder, get_embedders
    from textxai.validation import check_texts

    clf = as_classifier(classifier)
    texts = check_texts(texts, "texts")
    index = check_index(keyword_index, clf)
    embs = get_embedders(embedders if embedders is not None else index.embedders, clf)
    max_rate = check_unit(max_rate, "max_rate")
    min_similarity = check_unit(min_similarity, "min_similarity", -1.0, 1.0)
    if strategy not in ("toki", "random"):
        raise ValueError(f"strategy={strategy!r}: expected 'toki' or 'random'")
    for name, value in (("min_words", min_words), ("n_neighbors", n_neighbors), ("n_candidates", n_candidates)):
        if isinstance(value, bool) or not isinstance(value, int) or value < (0 if name == "min_words" else 1):
            raise ValueError(f"{name}={short_repr(value)}: expected a {'non-negative' if name == 'min_words' else 'positive'} integer")
    sent = sentence_embedder or MiniLMEmbedder()
    proba = clf.predict_proba(texts, batch_size=batch_size)
    predicted = proba.argmax(axis=1)
    if labels is not None:
        labels = _check_labels(labels, len(texts), clf.num_labels, "labels")
    rng = random.Random(seed)
    all_pool_words = sorted({w for pool in index.pools.values() for w in pool if _is_word(w)})
    results = []
    todo = [i for i in range(len(texts)) if labels is None or predicted[i] == labels[i]]
    grads = {}
    if strategy == "toki" and todo:
        scores = word_attributions([texts[i] for i in todo], clf, "gradient", target=[int(predicted[i]) for i in todo],
                                   batch_size=batch_size)
        grads = dict(zip(todo, scores))
    iterator = progress_bar(range(len(texts)), progress, "toki attack", unit="text")
    for i in iterator:
        text, c = texts[i], int(predicted[i])
        if i not in set(todo):
            results.append(AttackResult(text, text, c, None, 0, 1.0, [text], []))
            continue
        spans = _words.word_spans(text, clf.word_tokenizer)
        words = [w for w, _, _ in spans]
        positions = [j for j, w in enumerate(words) if _is_word(w)]
        if strategy == "toki":
            g = np.asarray(grads[i])
            order = sorted(positions, key=lambda j: (-g[j], j)) if len(g) == len(words) else positions
        else:
            order = positions[:]
            rng.shuffle(order)
        budget = _budget(len(positions), max_rate, min_words)
        original_vec = sent.sentences([text])[0]
        current, p_current = text, float(proba[i, c])
        cur_spans = spans
        chain, subs, success, sim = [text], [], False, 1.0
        for j in order:
            if len(subs) >= budget:
                break
            w = cur_spans[j][0]
            if strategy == "toki":
                _, cands = substitution_candidates(index, w, c, embs, n_neighbors, n_candidates)
            else:
                pool = [k for k in all_pool_words if k != w.lower()]
                cands = rng.sample(pool, min(n_candidates, len(pool)))
            if not cands:
                continue
            edited = [_replace(current, cur_spans, j, k) for k in cands]
            p = clf.predict_proba(edited, batch_size=batch_size)
            # the candidate lowering p(c) most among those meeting the similarity constraint; the constraint is
            # checked lazily in that order (same choice as filtering first, far fewer sentence encodings)
            chosen = None
            for m in sorted(range(len(edited)), key=lambda m: (p[m, c], m)):
                if p[m, c] >= p_current:
                    break
                s_m = float(sent.sentences([edited[m]])[0] @ original_vec)
                if s_m >= min_similarity:
                    chosen = (m, s_m)
                    break
            if chosen is None:
                continue
            m, sim = chosen
            current, p_current = edited[m], float(p[m, c])
            subs.append((w, cands[m]))
            chain.append(current)
            cur_spans = _words.word_spans(current, clf.word_tokenizer)
            if len(cur_spans) != len(spans):  # a replacement that tokenizes differently: stop here
                break
            if int(p[m].argmax()) != c:
                success = True
                break
        results.append(AttackResult(text, current, c, success, len(subs), sim, chain, subs))
    attacked = [r for r in results if r.success is not None]
    won = [r for r in attacked if r.success]
    return {"examples": results, "n_attacked": len(attacked),
            "attack_success_rate": len(won) / len(attacked) if attacked else float("nan"),
            "avg_perturbations": float(np.mean([r.n_perturbations for r in won])) if won else float("nan"),
            "avg_similarity": float(np.mean([r.similarity for r in won])) if won else float("nan")}


def toki_editor(classifier, keyword_index, embedders=None, n_words: int = 3, n_candidates: int = 3,
                n_neighbors: int = 10) -> Callable[[list[str]], list[list[str]]]:
    """The attack as an editor ``list[str] -> list[list[str]]`` (e.g. for ``textxai.inconsistency.feedback_chains``).

    For each text: the ``n_words`` words of highest gradient importance for the predicted class, each
    replaced by its ``n_candidates`` TOKI substitutions; one candidate text per substitution.
    """
    from textxai import words as _words
    from textxai.attribution import word_attributions
    from textxai.classifier import as_classifier
    from textxai.embeddings import get_embedders
    from textxai.validation import check_texts

    clf = as_classifier(classifier)
    index = check_index(keyword_index, clf)
    embs = get_embedders(embedders if embedders is not None else index.embedders, clf)

    def editor(texts: list[str]) -> list[list[str]]:
        texts = check_texts(texts, "texts")
        predicted = clf.predict(texts)
        grads = word_attributions(texts, clf, "gradient", target=[int(c) for c in predicted])
        out = []
        for text, c, g in zip(texts, predicted, grads):
            spans = _words.word_spans(text, clf.word_tokenizer)
            positions = [j for j, (w, _, _) in enumerate(spans) if _is_word(w)]
            if len(g) == len(spans):
                positions.sort(key=lambda j: (-g[j], j))
            cands = []
            for j in positions[:n_words]:
                _, subs = substitution_candidates(index, spans[j][0], int(c), embs, n_neighbors, n_candidates)
                cands += [_replace(text, spans, j, k) for k in subs]
            out.append(cands)
        return out

    return editor
