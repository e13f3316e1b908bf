"""FIM difficulty of texts through a :class:`textxai.classifier.TextClassifier`, and each word's sensitivity.

``x`` is the output of the model's input-embedding layer at every non-padding token position, special tokens
included; :func:`difficulty` batches texts of similar length through :func:`textxai.fim.eigen.fisher_eigen`.

>>> summarize([1.0, 2.0, 3.0])["median"]
2.0
"""
from __future__ import annotations

import numpy as np

from textxai.batching import charge, length_sorted_batches
from textxai.fim.eigen import _check_batch_size, fisher_eigen

SUMMARY_QUANTILES = (0.1, 0.25, 0.75, 0.9)


def _check_texts_nonempty(classifier, texts, pairs):
    """Every text (and pair) must hold at least one word the model sees (a word with a token: a text of only
    zero-width or control characters has "words" the tokenizer drops)."""
    for name, column in (("texts", texts), ("text_pairs", pairs)):
        for i, encoding in enumerate(classifier.word_encodings(column) if column is not None else []):
            if not (encoding.word_ids >= 0).any():
                raise ValueError(f"{name}[{i}]={column[i]!r:.80}: has no tokens the model sees; expected a text with at "
                                 "least one word")


def _prepare(texts, classifier, text_pairs, batch_size, tokenizer=None, device=None):
    from textxai.classifier import as_classifier
    from textxai.validation import check_text_pairs, check_texts

    texts = check_texts(texts)
    pairs = check_text_pairs(text_pairs, texts)
    _check_batch_size(batch_size)
    clf = as_classifier(classifier, tokenizer=tokenizer, device=device)
    clf.require_single_label("the FIM difficulty (the Fisher information of the softmax predictive distribution)")
    _check_texts_nonempty(clf, texts, pairs)
    return texts, pairs, clf


def _length_batches(clf, texts, pairs, batch_size: int, progress: bool, desc: str):
    """Index batches of similar token length (:func:`textxai.batching.length_sorted_batches`)."""
    lengths = [len(e.input_ids) for e in clf.word_encodings(texts, pairs)]
    return length_sorted_batches(lengths, batch_size, progress, desc)


def _fisher_counted(fn, embeds, mask, **kwargs):
    """:func:`fisher_eigen` on one batch with its C - 1 backward passes per row charged to the work budget (the
    batch's forward was charged by its length batch): the count :func:`textxai.fim.method.fim_evaluations` prices."""
    r = fisher_eigen(fn, embeds, mask=mask, **kwargs)
    charge(len(embeds) * (r.probs.shape[1] - 1))
    return r


def _embedding_batch(clf, texts, pairs):
    """Encode a batch; return (encoding, embeddings [B, L, d] detached, logits function, non-padding mask)."""
    enc = clf.encode(texts, pairs)
    tensors = enc.tensors
    embeds = clf.input_embeddings(tensors).detach()  # TypeError naming the model class when unreachable

    def fn(e):  # TypeError naming the model class when it cannot be fed embeddings
        return clf.logits_from_embeddings(e, tensors)

    return enc, embeds, fn, tensors["attention_mask"].bool()


def _word_sensitivity(v_rows: np.ndarray, word_ids: np.ndarray, n_words: int) -> np.ndarray:
    """L2 norm of the eigenvector's block over each word's tokens (sqrt of the summed squared row norms)."""
    sq = (v_rows[: len(word_ids)] ** 2).sum(1)
    out = np.zeros(n_words)
    keep = word_ids >= 0
    np.add.at(out, word_ids[keep], sq[keep])
    return np.sqrt(out)


def difficulty(
    texts,
    classifier,
    text_pairs=None,
    batch_size: int = 16,
    return_eigenvector: bool = False,
    return_all_eigenvalues: bool = False,
    progress: bool = False,
    tokenizer=None,
    device=None,
    keep_eigenvectors: bool = False,
) -> dict:
    """FIM difficulty lambda_max of every text for a classifier (``TextClassifier``, id, folder, model...).

    ``x`` is the output of the model's input-embedding layer at every non-padding token position, special
    tokens included (``D = L * d``). Texts are batched by similar length; results do not depend on
    ``batch_size`` beyond float32 round-off.

    Returns a dict of ``difficulty`` (``np.ndarray [N]``), ``probs`` ``[N, C]``, ``predictions`` ``[N]``; with
    ``return_all_eigenvalues`` ``all_eigenvalues`` ``[N, C]`` (descending; ``G``'s other eigenvalues are 0);
    with ``return_eigenvector`` ``words`` (list of word lists), ``word_sensitivity`` (per word, the L2 norm
    of the unit eigenvector's rows at that word's tokens; the squares over all words plus special tokens
    sum to 1); with ``keep_eigenvectors`` also ``eigenvectors`` (``[L_i, d]`` float32 per text, unpadded;
    large for long texts, hence off by default).

    >>> r = difficulty(["a wonderful film", "dull and too long"], "textxai/demo-sentiment")  # doctest: +SKIP
    >>> r["difficulty"].shape                                                                # doctest: +SKIP
    (2,)
    """
    texts, pairs, clf = _prepare(texts, classifier, text_pairs, batch_size, tokenizer, device)
    n, C = len(texts), clf.num_labels
    lam = np.empty(n)
    allv = np.empty((n, C))
    probs = np.empty((n, C))
    vecs: list = [None] * n
    words: list = [None] * n
    sens: list = [None] * n
    for idx in _length_batches(clf, texts, pairs, batch_size, progress, "fim difficulty"):
        sub_pairs = None if pairs is None else [pairs[i] for i in idx]
        enc, embeds, fn, mask = _embedding_batch(clf, [texts[i] for i in idx], sub_pairs)
        r = _fisher_counted(fn, embeds, mask, return_eigenvector=return_eigenvector or keep_eigenvectors)
        lam[idx] = r.eigenvalues.cpu().numpy()
        allv[idx] = r.all_eigenvalues.cpu().numpy()
        probs[idx] = r.probs.cpu().numpy()
        if return_eigenvector or keep_eigenvectors:
            V = r.eigenvectors.detach().cpu().numpy()  # float32 at least (fisher_eigen), float64 kept
            keep = mask.cpu().numpy()
            for row, i in enumerate(idx):
                words[i] = list(enc.words[row])
                ids = np.asarray(enc.word_ids[row])  # the row's tokens (a left-padded batch: padding marked -1)
                if len(ids) == keep.shape[1]:
                    ids = ids[keep[row]]
                rows_v = V[row][keep[row]]  # the row's own tokens, wherever the padding sits
                sens[i] = _word_sensitivity(rows_v.astype(np.float64), ids, len(words[i]))
                if keep_eigenvectors:
                    vecs[i] = rows_v.copy()
    out = {"difficulty": lam, "probs": probs, "predictions": probs.argmax(1)}
    if return_all_eigenvalues:
        out["all_eigenvalues"] = allv
    if return_eigenvector:
        out.update(words=words, word_sensitivity=sens)
    if keep_eigenvectors:
        out["eigenvectors"] = vecs
    return out


def summarize(values) -> dict:
    """Mean, standard deviation, median, min, max and the 10/25/75/90 % quantiles of finite ``values``.

    >>> summarize([1.0, 2.0, 3.0])["median"]
    2.0
    """
    a = np.asarray(values, dtype=np.float64)
    a = a[np.isfinite(a)]
    if a.size == 0:
        return {"n": 0, "mean": float("nan"), "std": float("nan"), "median": float("nan")}
    out = {"n": int(a.size), "mean": float(a.mean()), "std": float(a.std()), "median": float(np.median(a)),
           "min": float(a.min()), "max": float(a.max())}
    for q in SUMMARY_QUANTILES:
        out[f"q{int(round(q * 100)):02d}"] = float(np.quantile(a, q))
    return out



def _label_ids(labels, clf, n: int) -> np.ndarray:
    """Gold labels as class indices (:meth:`~textxai.classifier.TextClassifier.class_indices`: integers as given,
    label names matched to the model's labels; on a model whose labels are named by numbers, every label a name)."""
    return clf.class_indices(labels, "labels", n)


def top_words(words, sensitivity, k: int = 3) -> list[str]:
    """The ``k`` words with the largest sensitivity, largest first (ties in text order).

    >>> top_words(["a", "dull", "film"], [0.1, 0.9, 0.4], k=2)
    ['dull', 'film']
    """
    order = np.argsort(-np.asarray(sensitivity), kind="stable")[:k]
    return [words[i] for i in order]
