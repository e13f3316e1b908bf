"""The TOKI-guided word-substitution attack (§4) and the attack as an editor.

The paper's attack "follows the same architecture as A2T": words are visited in decreasing importance,
each is replaced by the best of its candidates, under a modification-rate budget and a sentence-similarity
constraint; the difference is where candidates come from and how they are chosen.

* **Positions**: decreasing importance of each word for the predicted class, by default its omission
  importance (the drop of p(predicted) when the word is masked: the explanation TOKI's keyword index is
  built from, and TextFooler's word ranking; one batched call of one query per word); ``importance=
  "gradient"`` is A2T's gradient ranking.
* **Candidates** (:func:`candidate_pool`, the same set for both strategies): the generator shared with the
  built-in counterfactual editor (:class:`textxai.editors.SubstituteGenerator`, meaning-keeping mode: GloVe
  neighbours checked by GloVe and MiniLM, no stop words, no antonyms, no word related to another class),
  plus, as the paper, words of TOKI's pools held to the same checks: for a word related to the predicted
  class its keywords, for an unrelated word the other classes' non-keywords.
* **Choice**: all candidates of a position (``n_candidates=None``, as A2T / TextFooler) are scored in one
  batched model call and the one lowering p(predicted) most while keeping the sentence similarity is kept.
  With ``n_candidates=k`` only TOKI's ``k`` preferred ones are tried (:func:`toki_scores`: the word-class
  correlation — importance for another class minus importance for the predicted one, from the pools
  (eq. 2) and, for words the training explanations never met, from the model reading the word alone,
  :class:`WordClassCorrelation`).
* **Budget** (A2T): at most ``max(min_words, floor(max_rate * n_words))`` substitutions, MiniLM sentence cosine
  >= ``min_similarity``; ``width`` positions per step.

The random baseline has the same budget, the same candidate set and the same number of candidates per
position; it visits positions in random order and draws its candidates at random (all of them by default,
in random order). Each result counts its model queries (``n_queries``: texts scored, the ranking included).
"""
from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from textxai.toki.assess import relate_to_class_name, relate_words
from textxai.toki.core import check_unit, with_keywords
from textxai.toki.index import SINGLE_LABEL, KeywordIndex, check_index
from textxai.progress import progress_bar
from textxai.validation import check_choice, check_seed, short_repr

# ----------------------------------------------------------------------------- the TOKI-guided attack (§4)
def _is_word(w: str) -> bool:
    return any(ch.isalnum() for ch in w)


def _replace(text: str, spans, i: int, new: str) -> str:
    """``text`` with its ``i``-th word replaced by ``new`` (kept apart from a neighbour it would glue to: "film" in
    place of the "n't" of "don't" gives "do film", not "dofilm")."""
    from textxai.words import separated

    _, start, end = spans[i]
    return text[:start] + separated(text, start, end, new) + text[end:]


def class_lean(index: KeywordIndex, words: list[str], c: int, embedders: Sequence) -> np.ndarray:
    """Per word, mean over the embedders of ``sim(word, class c) - max sim(word, other class)`` (anchor words)."""
    from textxai.toki.index import class_vectors
    from textxai.toki.core import cosine_matrix

    out = []
    for emb in embedders:
        vecs = class_vectors(emb, {k: index.anchors(k) for k in index.class_names})
        sims = {k: cosine_matrix(emb.embed([w.lower() for w in words]), v[None, :])[:, 0] for k, v in vecs.items()}
        out.append(sims[c] - np.max([sims[k] for k in sims if k != c], axis=0))
    return np.mean(out, axis=0)


def other_class_words(index: KeywordIndex, c: int, embedders: Sequence, word: str | None = None) -> Callable[[list[str]], np.ndarray]:
    """A predicate over replacement words that would change the meaning for class ``c``: related to another
    class (TOKI(-K.I), with votes: an antonym of ``c``'s keywords), or leaning toward another class (closer
    to its anchor words than to those of ``c``) more than the original ``word`` does."""
    classes = sorted(index.class_names)
    base = min(0.0, float(class_lean(index, [word], c, embedders)[0])) if word else 0.0

    def forbidden(words: list[str]) -> np.ndarray:
        marks = [relate_to_class_name(words, index.anchors(k), embedders, index.theta_relate,
                                      [index.anchors(o) for o in classes if o != k]) for k in classes if k != c]
        marks.append(class_lean(index, words, c, embedders) < base)
        return np.any(marks, axis=0)

    return forbidden


def candidate_pool(index: KeywordIndex, word: str, c: int, embedders: Sequence, n_neighbors: int = 30,
                   generator=None) -> tuple[bool, list[str]]:
    """§4: every meaning-keeping replacement of ``word`` in a text predicted ``c`` (both strategies draw from
    it), and whether ``word`` is related to ``c`` (eq. 5).

    The shared generator's neighbours of ``word`` plus, as the paper, words of TOKI's pools — for a word
    related to ``c`` the keywords of ``c`` (the paper takes those of low importance), for an unrelated word
    the non-keywords of the other classes (the paper takes those of high importance) — each held to the
    same meaning checks (:meth:`textxai.editors.SubstituteGenerator.check`); generator order, pool words last.
    """
    from textxai.editors import shared_generator

    gen = generator or shared_generator(keep_meaning=True)
    related = bool(relate_words(index, [word.lower()], c, embedders)[0])
    forbidden = other_class_words(index, c, embedders, word)
    cands = dict(gen(word, n_neighbors, forbidden))
    pool = index.keyword_list(c) if related else sorted({w for k in index.pools if k != c for w in index.non_keywords(k)})
    for w, sim in gen.check(word, pool, forbidden):
        cands.setdefault(w, sim)
    return related, list(cands)


def substitution_candidates(index: KeywordIndex, word: str, c: int, embedders: Sequence, n_neighbors: int = 30,
                            n_candidates: int = 5, generator=None, correlation=None) -> tuple[bool, list[str]]:
    """The ``n_candidates`` replacements of :func:`candidate_pool` TOKI prefers, best first, and whether
    ``word`` is related to ``c`` (eq. 5).

    TOKI ranks them by :func:`toki_scores` (importance for another class minus importance for ``c``, from
    the pools and, with ``correlation`` (a :class:`WordClassCorrelation`), from the model reading the word
    alone; this orders both of the paper's cases: low importance for ``c`` first, high importance for
    another class first); ties by the word.
    """
    related, words = candidate_pool(index, word, c, embedders, n_neighbors, generator)
    scores = toki_scores(index, words, c, embedders, correlation(words) if correlation is not None and words else None)
    ranked = [w for _, w in sorted(zip(scores, words), key=lambda x: (-x[0], x[1]))]
    return related, ranked[:n_candidates]


def toki_scores(index: KeywordIndex, words: list[str], c: int, embedders: Sequence, correlation=None) -> np.ndarray:
    """How strongly each word is tied to another class rather than to ``c`` (higher: a better substitute for
    the attack): its pool importance for the closest other class minus that for ``c`` (eq. 2, the paper's
    word-class correlation), plus

    * with ``correlation`` (``[len(words), n_classes]``, the model's probabilities of each word read alone,
      :class:`WordClassCorrelation`): the largest other-class probability minus that of ``c`` — the same
      word-class correlation measured for words the training explanations never met;
    * without: the word's mean cosine with the keywords of the closest other class minus that with the
      keywords of ``c`` (mean over the embedders).
    """
    from textxai.toki.core import cosine_matrix

    if not words:
        return np.zeros(0)
    pool = np.array([max((index.pools[k].get(w.lower(), 0.0) for k in index.pools if k != c), default=0.0)
                     - index.pools.get(c, {}).get(w.lower(), 0.0) for w in words])
    if correlation is not None:
        corr = np.asarray(correlation, dtype=np.float64)
        return pool + np.delete(corr, c, axis=1).max(axis=1) - corr[:, c]
    keys = {k: index.keyword_list(k) or index.anchors(k) for k in index.class_names}
    sims = []
    for emb in embedders:
        vecs = emb.embed([w.lower() for w in words])
        mean = {k: cosine_matrix(vecs, emb.embed(v)).mean(axis=1) for k, v in keys.items()}
        sims.append(np.max([mean[k] for k in keys if k != c], axis=0) - mean[c])
    return np.mean(sims, axis=0) + pool


class WordClassCorrelation:
    """The model's class probabilities for words read alone (lower case), cached: TOKI's word-class
    correlation for candidate words outside the pools. One batched forward pass per set of new words."""

    def __init__(self, classifier, batch_size: int = 32):
        self.classifier, self.batch_size, self._cache = classifier, batch_size, {}

    @property
    def seen(self) -> set[str]:
        """The words read so far (one model query each)."""
        return set(self._cache)

    def __call__(self, words: list[str]) -> np.ndarray:
        todo = sorted({w.lower() for w in words} - set(self._cache))
        if todo:
            for w, p in zip(todo, self.classifier.predict_proba(todo, batch_size=self.batch_size)):
                self._cache[w] = p
        return np.array([self._cache[w.lower()] for w in words]).reshape(len(words), -1)


def _toki_order(positions: list[int], importance) -> list[int]:
    """Positions to attack: decreasing word importance toward the predicted class (ties: left to right)."""
    g = np.asarray(importance)
    return sorted(positions, key=lambda j: (-float(g[j]) if len(g) > j else 0.0, j))


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
    n_queries: int = 0             # model calls spent on this text (texts scored), ranking included


@dataclass(frozen=True)
class AttackOptions:
    """The attack's budget and constraints (A2T: ``max_rate`` 0.1, ``min_words`` 2, ``min_similarity`` 0.8);
    ``n_candidates`` None: every candidate of a position is tried; ``importance``: "omission" or "gradient";
    ``precision`` of the forward passes (ranking and candidates; see ``TextClassifier.resolve_precision``)."""

    max_rate: float = 0.1
    min_words: int = 2
    min_similarity: float = 0.8
    n_neighbors: int = 30
    n_candidates: int | None = None
    width: int = 3
    strategy: str = "toki"
    seed: int = 0
    importance: str = "omission"
    precision: str = "float32"

    def checked(self) -> "AttackOptions":
        from textxai.classifier import PRECISIONS

        check_choice(self.precision, "precision", PRECISIONS)
        check_unit(self.max_rate, "max_rate")
        check_unit(self.min_similarity, "min_similarity", -1.0, 1.0)
        check_choice(self.strategy, "strategy", ("toki", "random"))
        check_choice(self.importance, "importance", ("omission", "gradient"))
        check_seed(self.seed)
        for name in ("min_words", "n_neighbors", "n_candidates", "width"):
            value, low = getattr(self, name), 0 if name == "min_words" else 1
            if value is None and name == "n_candidates":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name}={short_repr(value)}: expected a {'non-negative' if low == 0 else 'positive'} integer")
        return self


def _pools(index: KeywordIndex, embedders: Sequence, n_neighbors: int, generator) -> Callable[[str, int], list[str]]:
    """:func:`candidate_pool` of a (word, class), computed once per keyword index, embedders, ``n_neighbors`` and
    generator: windows, texts and later attacks with the same index (TOKI then random, an audit's stages) revisit
    words. The pools live on the index object (not saved with it)."""
    store = index.__dict__.setdefault("_candidate_pools", {})
    settings = (tuple(getattr(e, "name", repr(e)) for e in embedders), n_neighbors, id(generator))
    store.setdefault(("generator", id(generator)), generator)   # kept alive: its id is never reused by another

    def pool(word: str, c: int) -> list[str]:
        key = settings + (word, c)
        if key not in store:
            store[key] = candidate_pool(index, word, c, embedders, n_neighbors, generator)[1]
        return list(store[key])

    return pool


def _budget(n_words: int, max_rate: float, min_words: int) -> int:
    return max(min_words, int(math.floor(max_rate * n_words)))


SIMILARITY_CHUNK = 2  # candidates whose sentence similarity is computed at once (then 4, 8, ...)


def _first_similar(gen, original: str, texts: list[str], min_similarity: float) -> tuple[int, float] | None:
    """``(i, similarity)`` of the first of ``texts`` whose sentence cosine with ``original`` is at least
    ``min_similarity`` (None: none is). The similarities are computed in growing chunks, in order, so a first
    candidate that keeps the meaning (the usual case: one word of a long review changed) costs one small
    batch instead of one sentence embedding per candidate; the answer is the one of all of them at once."""
    start, size = 0, SIMILARITY_CHUNK
    while start < len(texts):
        sims = gen.similar_texts(original, texts[start: start + size], min_similarity)
        for i, x in enumerate(sims):
            if x is not None:
                return start + i, x
        start, size = start + size, size * 2
    return None


def _attack_one(clf, text: str, c: int, p_c: float, order: list[int], candidates_of, opts: AttackOptions,
                gen, batch_size: int) -> AttackResult:
    """Greedy substitution: each step tries the candidates of the next ``width`` positions of ``order`` and keeps
    the one lowering p(c) most while keeping the sentence similarity (a position without such a candidate is
    dropped); stop at a flip or when the budget is spent."""
    from textxai import words as _words

    spans = _words.word_spans(text, clf.word_tokenizer)
    budget = _budget(sum(_is_word(w) for w, _, _ in spans), opts.max_rate, opts.min_words)
    current, cur_spans, chain, subs, sim, todo = text, spans, [text], [], 1.0, list(order)
    queries = 0
    while todo and len(subs) < budget:
        window, todo = todo[: opts.width], todo[opts.width:]
        tried = [(j, k) for j in window for k in candidates_of(cur_spans[j][0])]
        edited = [_replace(current, cur_spans, j, k) for j, k in tried]
        queries += len(edited)
        p = clf.predict_proba(edited, batch_size=batch_size, precision=opts.precision) if edited else np.zeros((0, 1))
        lower = sorted((m for m in range(len(edited)) if p[m, c] < p_c), key=lambda m: (p[m, c], m))
        found = _first_similar(gen, text, [edited[m] for m in lower], opts.min_similarity)
        if found is None:   # no candidate lowering p(c) keeps the meaning
            continue
        m, best_sim = lower[found[0]], found[1]
        j = tried[m][0]
        todo = [x for x in window if x != j] + todo      # the other positions of the window stay in line
        subs.append((cur_spans[j][0], tried[m][1]))
        current, p_c, sim = edited[m], float(p[m, c]), best_sim
        chain.append(current)
        if int(p[m].argmax()) != c:  # read before the word count below: a flipping edit is a success either way
            return AttackResult(text, current, c, True, len(subs), sim, chain, subs, queries)
        cur_spans = _words.word_spans(current, clf.word_tokenizer)
        if len(cur_spans) != len(spans):  # a replacement that tokenizes differently: stop here
            break
    return AttackResult(text, current, c, False, len(subs), sim, chain, subs, queries)


def toki_attack(classifier, texts, keyword_index, labels=None, embedders=None, options: AttackOptions | None = None,
                batch_size: int = 32, progress: bool = False, generator=None, **kwargs) -> dict:
    """The TOKI-guided word-substitution attack (§4), greedy over word importance as A2T / TextFooler.

    For each text (attacked only where the prediction equals ``labels`` when given): words are visited in
    decreasing ``importance`` for the predicted class (:func:`_toki_order`; "omission" by default,
    "gradient" is A2T's); at each step the candidates (:func:`candidate_pool`; with ``n_candidates=k`` TOKI's
    ``k`` best, :func:`substitution_candidates`) of the next ``width`` positions are scored in one batched
    call, and the one lowering the original class's probability most among those keeping MiniLM sentence
    cosine >= ``min_similarity`` is kept when it lowers it at all. The attack stops when the prediction
    changes or the budget is spent. ``strategy="random"`` is the baseline: random word positions and the
    same number of random replacements from the same candidate set (under ``seed``), same budget and
    constraints. ``kwargs`` are :class:`AttackOptions` fields (``max_rate=0.2``, ...).

    Returns ``{"examples": [AttackResult...], "attack_success_rate", "avg_perturbations" (over successful
    attacks), "avg_similarity" (successful attacks), "avg_queries" (model queries per attacked text: the
    texts scored, the word ranking included), "n_attacked"}``.
    """
    from textxai.attribution import word_attributions
    from textxai.classifier import as_classifier
    from textxai.editors import shared_generator
    from textxai.embeddings import distinct_voters, get_embedders
    from textxai.validation import check_texts
    from textxai.words import word_spans

    (opts,) = with_keywords("toki_attack", kwargs, (AttackOptions, options))
    opts = opts.checked()
    clf = as_classifier(classifier).require_single_label(SINGLE_LABEL)
    texts = check_texts(texts, "texts")
    labels = None if labels is None else clf.class_indices(labels, "labels", n=len(texts))
    index = check_index(keyword_index, clf)
    embs = distinct_voters(get_embedders(embedders if embedders is not None else index.embedders, clf))
    gen = generator or shared_generator(keep_meaning=True)
    opts = dataclasses.replace(opts, precision=clf.resolve_precision(opts.precision))
    proba = clf.predict_proba(texts, batch_size=batch_size, precision=opts.precision)
    predicted = proba.argmax(axis=1)
    todo = {i for i in range(len(texts)) if labels is None or predicted[i] == labels[i]}
    importance = {}
    if opts.strategy == "toki" and todo:
        ordered = sorted(todo)
        scores = word_attributions([texts[i] for i in ordered], clf, opts.importance, precision=opts.precision,
                                   target=[int(predicted[i]) for i in ordered], batch_size=batch_size)
        importance = dict(zip(ordered, scores))
    rng = random.Random(opts.seed)
    correlation = WordClassCorrelation(clf, batch_size)
    pool_of = _pools(index, embs, opts.n_neighbors, gen)
    results = []
    iterator = progress_bar(range(len(texts)), progress, "toki attack", unit="text")
    for i in iterator:
        text, c = texts[i], int(predicted[i])
        if i not in todo:
            results.append(AttackResult(text, text, c, None, 0, 1.0, [text], []))
            continue
        words = [w for w, _, _ in word_spans(text, clf.word_tokenizer)]
        positions = [j for j, w in enumerate(words) if _is_word(w)]
        known = len(correlation.seen)
        if opts.strategy == "toki":
            order = _toki_order(positions, importance[i])
            if opts.n_candidates is None:   # every candidate is tried: TOKI's ranking of them is not needed
                candidates_of = lambda w, c=c: pool_of(w, c)  # noqa: E731
            else:
                candidates_of = lambda w, c=c: substitution_candidates(index, w, c, embs, opts.n_neighbors,  # noqa: E731
                                                                       opts.n_candidates, gen, correlation)[1]
        else:
            order = positions[:]
            rng.shuffle(order)

            def candidates_of(w, c=c):
                pool = pool_of(w, c)
                return rng.sample(pool, len(pool) if opts.n_candidates is None else min(opts.n_candidates, len(pool)))
        res = _attack_one(clf, text, c, float(proba[i, c]), order, candidates_of, opts, gen, batch_size)
        ranking = (len(words) if opts.importance == "omission" else 1) if opts.strategy == "toki" else 0
        res.n_queries += ranking + len(correlation.seen) - known
        results.append(res)
    return summarize_attack(results)


def summarize_attack(results: list[AttackResult]) -> dict:
    """Success rate over attacked texts; perturbations and similarity over successful attacks."""
    attacked = [r for r in results if r.success is not None]
    won = [r for r in attacked if r.success]
    return {"examples": results, "n_attacked": len(attacked),
            "attack_success_rate": len(won) / len(attacked) if attacked else float("nan"),
            "avg_perturbations": float(np.mean([r.n_perturbations for r in won])) if won else float("nan"),
            "avg_similarity": float(np.mean([r.similarity for r in won])) if won else float("nan"),
            "avg_queries": float(np.mean([r.n_queries for r in attacked])) if attacked else float("nan")}


def toki_editor(classifier, keyword_index, embedders=None, n_words: int = 3, n_candidates: int = 3,
                n_neighbors: int = 30) -> Callable[[list[str]], list[list[str]]]:
    """The attack as an editor ``list[str] -> list[list[str]]`` (e.g. for ``textxai.inconsistency.feedback_chains``).

    For each text: the ``n_words`` words of highest gradient importance for the predicted class, each
    replaced by its ``n_candidates`` TOKI substitutions; one candidate text per substitution.
    """
    from textxai import words as _words
    from textxai.attribution import word_attributions
    from textxai.classifier import as_classifier
    from textxai.embeddings import distinct_voters, get_embedders
    from textxai.validation import check_texts

    clf = as_classifier(classifier)
    index = check_index(keyword_index, clf)
    embs = distinct_voters(get_embedders(embedders if embedders is not None else index.embedders, clf))
    correlation = WordClassCorrelation(clf)

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
                _, subs = substitution_candidates(index, spans[j][0], int(c), embs, n_neighbors, n_candidates,
                                                  correlation=correlation)
                cands += [_replace(text, spans, j, k) for k in subs]
            out.append(cands)
        return out

    return editor
