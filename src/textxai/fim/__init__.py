"""Example difficulty from the Fisher information metric (FIM) of a classifier's input.

Paper: "Geometry matters: exploring language examples at the decision boundary" (Datta et al.).
For an input ``x`` (flattened to ``D`` numbers) and class probabilities ``p = softmax(f(x))``, let
``J = d log p / d x`` (``[C, D]``). The FIM is ``G = J^T diag(p) J`` (``[D, D]``, Algorithm 1) and the
difficulty of the example is ``lambda_max(G)``: how much the predicted distribution can change (in KL,
to second order) under a small move of the input. High values lie near the decision boundary.

``G`` is never formed. Its nonzero eigenvalues are those of the ``C x C`` matrix
``M = diag(sqrt p) J J^T diag(sqrt p)`` and its top eigenvector is ``v = J^T diag(sqrt p) u / sqrt(lambda)``
(``u`` the top eigenvector of ``M``). Because ``log p`` is invariant to adding a constant to every logit,
``J = (I - 1 p^T) J_z`` with ``J_z`` the Jacobian of the logits, and only the ``C - 1`` logit differences
``z_c - z_C`` need a backward pass: the cost is one forward and ``C - 1`` backward passes, batched.

The core (:func:`fisher_eigen`, :func:`tensor_difficulty`) works on any differentiable function of a plain
tensor; the text functions go through :class:`textxai.classifier.TextClassifier`, where ``x`` is the output
of the model's input-embedding layer at every non-padding position, special tokens ([CLS], [SEP], <s>...)
included.

>>> import torch
>>> W = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
>>> x = torch.zeros(1, 2, dtype=torch.float64)
>>> res = fisher_eigen(lambda x: x @ W.T, x)
>>> round(float(res.eigenvalues[0]), 6)   # p = (1/2, 1/2): p1 p2 ||w1 - w2||^2 = 0.25 * 2
0.5
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from textxai.batching import length_sorted_batches
from textxai.progress import progress_bar

__all__ = [
    "FIMOptions",
    "FisherEigen",
    "compute",
    "difficulty",
    "difficulty_correlation",
    "difficulty_shift",
    "fisher_eigen",
    "min_flip_strength",
    "perturb_along_eigenvector",
    "perturbed_test_set",
    "random_substitution_flip_rate",
    "summarize",
    "tensor_difficulty",
]


@dataclass
class FisherEigen:
    """Top of the FIM spectrum for a batch.

    eigenvalues: ``[B]`` lambda_max (float64). all_eigenvalues: ``[B, C]`` the nonzero part of the spectrum
    (eigenvalues of ``M``, descending; ``G`` has ``D - C`` more zeros). probs: ``[B, C]`` float64.
    eigenvectors: ``[B, *x.shape[1:]]`` unit-norm top eigenvector of ``G`` (``None`` unless asked), signed so
    that moving along it lowers the predicted class's probability to first order (zero when lambda_max = 0).
    """

    eigenvalues: torch.Tensor
    all_eigenvalues: torch.Tensor
    probs: torch.Tensor
    eigenvectors: torch.Tensor | None = None


def _grams(fn: Callable, x: torch.Tensor, mask: torch.Tensor | None, keep_rows: bool):
    """Forward once, backward C - 1 times. Returns (logits float64 [B, C], K [B, C-1, C-1], rows or None)."""
    with torch.enable_grad():
        x = x.detach().requires_grad_(True)
        logits = fn(x)
        if not isinstance(logits, torch.Tensor) or logits.dim() != 2 or logits.shape[0] != x.shape[0]:
            shape = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits).__name__
            raise ValueError(
                f"fn returned {shape}: expected logits of shape [batch, num_classes] with batch = {x.shape[0]}"
            )
        C = logits.shape[1]
        if C < 2:
            raise ValueError(f"fn returned {C} class logit(s): expected at least 2 classes")
        if not bool(torch.isfinite(logits.detach()).all()):
            raise ValueError("fn returned non-finite logits (NaN or inf): expected finite logits (a diverged model?)")
        B = x.shape[0]
        rows = []
        for c in range(C - 1):
            diff = (logits[:, c] - logits[:, C - 1]).sum()
            (g,) = torch.autograd.grad(diff, x, retain_graph=c < C - 2)
            if mask is not None:
                g = g * mask.reshape(mask.shape + (1,) * (g.dim() - mask.dim())).to(g.dtype)
            rows.append(g.reshape(B, -1).to(torch.float64))
    Z = torch.stack(rows, dim=1)  # [B, C-1, D]
    K = Z @ Z.transpose(1, 2)  # [B, C-1, C-1]
    return logits.detach().to(torch.float64), K, (Z if keep_rows else None)


def fisher_eigen(
    fn: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    mask: torch.Tensor | None = None,
    return_eigenvector: bool = False,
) -> FisherEigen:
    """Spectrum of the FIM ``G = J^T diag(p) J`` of ``fn`` at every example of ``x``, without forming ``G``.

    fn: differentiable ``x [B, ...] -> logits [B, C]`` acting on each example independently (eval mode).
    x: the batch of inputs. mask: optional bool ``[B, ...]`` (a prefix of ``x.shape``); ``False`` marks
    positions that are not part of the input (padding): their gradient is dropped, so ``D`` counts only the
    kept positions. return_eigenvector: also return ``v`` (same shape as ``x``).

    >>> x = torch.tensor([[2.0, 0.0]], dtype=torch.float64)
    >>> r = fisher_eigen(lambda x: torch.stack([x[:, 0], -x[:, 0]], 1), x, return_eigenvector=True)
    >>> p = torch.sigmoid(torch.tensor(4.0, dtype=torch.float64))   # logit gap 4
    >>> bool(torch.isclose(r.eigenvalues[0], p * (1 - p) * 4))
    True
    >>> r.eigenvectors[0].tolist()   # moves toward the other class
    [-1.0, 0.0]
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x={type(x).__name__}: expected a torch.Tensor")
    if x.dim() < 2 or x.shape[0] == 0:
        raise ValueError(f"x has shape {tuple(x.shape)}: expected [batch >= 1, ...]")
    if mask is not None and tuple(mask.shape) != tuple(x.shape[: mask.dim()]):
        raise ValueError(f"mask has shape {tuple(mask.shape)}: expected a prefix of x.shape = {tuple(x.shape)}")
    logits, K, Z = _grams(fn, x, mask, return_eigenvector)
    B, C = logits.shape
    p = torch.softmax(logits, dim=1)  # float64
    sp = p.sqrt()
    # J J^T for log p: P K0 P^T with P = I - 1 p^T and K0 = K padded with a zero last row/column.
    K0 = torch.zeros(B, C, C, dtype=torch.float64, device=K.device)
    K0[:, : C - 1, : C - 1] = K
    eye = torch.eye(C, dtype=torch.float64, device=K.device)
    P = eye.unsqueeze(0) - p.unsqueeze(1).expand(B, C, C)  # row c: e_c - p  -> P[b, c, j] = delta_cj - p_j
    JJt = P @ K0 @ P.transpose(1, 2)
    M = sp.unsqueeze(2) * JJt * sp.unsqueeze(1)
    M = 0.5 * (M + M.transpose(1, 2))
    evals, evecs = torch.linalg.eigh(M)  # ascending
    evals = evals.flip(-1).clamp_min(0.0)
    evecs = evecs.flip(-1)
    lam = evals[:, 0]
    vecs = None
    if return_eigenvector:
        u = evecs[:, :, 0]  # [B, C]
        a = P.transpose(1, 2) @ (sp * u).unsqueeze(2)  # [B, C, 1]: v = Z^T a[:C-1] / sqrt(lam)
        pos = lam > 0
        scale = torch.where(pos, lam.clamp_min(1e-300).rsqrt(), torch.zeros_like(lam))
        coef = a[:, : C - 1, 0] * scale.unsqueeze(1)  # [B, C-1]
        # sign: first-order change of log p_yhat along v must be <= 0. grad log p_yhat = (P Z0)[yhat]
        yhat = p.argmax(1)
        slope = ((P @ K0)[torch.arange(B), yhat, : C - 1] * coef).sum(1)
        coef = torch.where((slope > 0).unsqueeze(1), -coef, coef)
        v = (coef.unsqueeze(2) * Z).sum(1)  # [B, D]
        norm = v.norm(dim=1, keepdim=True)
        v = torch.where(norm > 0, v / norm.clamp_min(1e-300), v)  # exact unit norm against round-off
        vecs = v.reshape(x.shape).to(x.dtype)
    return FisherEigen(eigenvalues=lam, all_eigenvalues=evals, probs=p, eigenvectors=vecs)


def _check_batch_size(batch_size) -> int:
    from textxai.validation import check_positive_int

    return check_positive_int(batch_size, "batch_size")


def tensor_difficulty(
    fn: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    batch_size: int = 64,
    return_eigenvector: bool = False,
    return_all_eigenvalues: bool = False,
    progress: bool = False,
) -> dict:
    """lambda_max of the FIM for every row of ``x`` (a plain tensor), in batches of ``batch_size``.

    Returns ``{"difficulty": np.ndarray [N], "probs": [N, C]}`` plus ``"eigenvectors"`` ``[N, ...]`` and
    ``"all_eigenvalues"`` ``[N, C]`` when asked.

    >>> x = torch.zeros(3, 2)
    >>> tensor_difficulty(lambda x: torch.cat([x, -x], 1), x)["difficulty"].round(6).tolist()
    [0.5, 0.5, 0.5]
    """
    _check_batch_size(batch_size)
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x={type(x).__name__}: expected a torch.Tensor")
    lam, allv, probs, vecs = [], [], [], []
    for start in progress_bar(range(0, x.shape[0], batch_size), progress, "fim", unit="batch"):
        r = fisher_eigen(fn, x[start : start + batch_size], return_eigenvector=return_eigenvector)
        lam.append(r.eigenvalues.cpu().numpy())
        allv.append(r.all_eigenvalues.cpu().numpy())
        probs.append(r.probs.cpu().numpy())
        if return_eigenvector:
            vecs.append(r.eigenvectors.detach().cpu().numpy())
    out = {"difficulty": np.concatenate(lam), "probs": np.concatenate(probs)}
    if return_all_eigenvalues:
        out["all_eigenvalues"] = np.concatenate(allv)
    if return_eigenvector:
        out["eigenvectors"] = np.concatenate(vecs)
    return out


# ---------------------------------------------------------------------------------------------- texts
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
        r = fisher_eigen(fn, embeds, mask=mask, return_eigenvector=return_eigenvector or keep_eigenvectors)
        lam[idx] = r.eigenvalues.cpu().numpy()
        allv[idx] = r.all_eigenvalues.cpu().numpy()
        probs[idx] = r.probs.cpu().numpy()
        if return_eigenvector or keep_eigenvectors:
            V = r.eigenvectors.detach().cpu().numpy()
            for row, i in enumerate(idx):
                length = int(mask[row].sum())
                words[i] = list(enc.words[row])
                sens[i] = _word_sensitivity(V[row, :length].astype(np.float64), enc.word_ids[row][:length], len(words[i]))
                if keep_eigenvectors:
                    vecs[i] = V[row, :length].copy()
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


def _check_strength(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name}={value!r}: expected a finite number > 0")
    return float(value)


def perturb_along_eigenvector(text: str, classifier, strength, text_pair: str | None = None) -> np.ndarray:
    """Class probabilities when the input embeddings move by ``strength * v`` (``v`` the unit top eigenvector).

    ``v`` is signed so that a small positive ``strength`` lowers the predicted class (paper §4.3, Fig. 2-3).
    ``strength`` is a number or a list of numbers (L2 norm of the move); returns ``[k, C]`` (``k`` strengths).

    >>> perturb_along_eigenvector("a wonderful film", "textxai/demo-sentiment", [0.0, 1.0]).shape  # doctest: +SKIP
    (2, 2)
    """
    strengths = np.atleast_1d(np.asarray(strength, dtype=np.float64)) if not isinstance(strength, (str, bytes)) else None
    if strengths is None or strengths.ndim != 1 or strengths.size == 0 or not np.isfinite(strengths).all():
        raise ValueError(f"strength={strength!r}: expected a finite number or a non-empty list of finite numbers")
    if not isinstance(text, str):
        raise TypeError(f"text={text!r} ({type(text).__name__}): expected a string")
    texts, pairs, clf = _prepare([text], classifier, None if text_pair is None else [text_pair], 1)
    enc, embeds, fn, mask = _embedding_batch(clf, texts, pairs)
    r = fisher_eigen(fn, embeds, mask=mask, return_eigenvector=True)
    s = torch.as_tensor(strengths, dtype=embeds.dtype, device=embeds.device).reshape(-1, 1, 1)
    moved = embeds + s * r.eigenvectors
    tensors = {k: t.repeat(len(strengths), 1) for k, t in enc.tensors.items()}
    with torch.no_grad():
        logits = clf.logits_from_embeddings(moved, tensors)
    return torch.softmax(logits.to(torch.float64), dim=1).cpu().numpy()


def min_flip_strength(
    texts,
    classifier,
    max_strength: float = 6.0,
    tol: float = 1e-3,
    text_pairs=None,
    batch_size: int = 16,
    progress: bool = False,
) -> np.ndarray:
    """Smallest L2 strength along the top eigenvector that flips the prediction (binary search, paper §4.3).

    The search runs in ``[0, max_strength]`` (the paper uses (0, 6)) to a bracket of width ``tol``; the
    returned value is the upper end of the final bracket (a strength that flips). ``inf`` where even
    ``max_strength`` does not flip the prediction. Texts are searched in parallel, ``batch_size`` at a time.

    >>> min_flip_strength(["a wonderful film"], "textxai/demo-sentiment")  # doctest: +SKIP
    array([...])
    """
    max_strength = _check_strength(max_strength, "max_strength")
    tol = _check_strength(tol, "tol")
    texts, pairs, clf = _prepare(texts, classifier, text_pairs, batch_size)
    steps = max(1, math.ceil(math.log2(max_strength / tol)))
    out = np.empty(len(texts))
    for idx in _length_batches(clf, texts, pairs, batch_size, progress, "min flip strength"):
        sub_pairs = None if pairs is None else [pairs[i] for i in idx]
        enc, embeds, fn, mask = _embedding_batch(clf, [texts[i] for i in idx], sub_pairs)
        r = fisher_eigen(fn, embeds, mask=mask, return_eigenvector=True)
        yhat = r.probs.argmax(1).to(embeds.device)
        v = r.eigenvectors

        def flips(s: torch.Tensor) -> torch.Tensor:
            with torch.no_grad():
                logits = fn(embeds + s.to(embeds.dtype).reshape(-1, 1, 1) * v)
            return logits.argmax(1) != yhat

        B = len(idx)
        lo = torch.zeros(B, dtype=torch.float64)
        hi = torch.full((B,), max_strength, dtype=torch.float64)
        ok = flips(hi).cpu()
        for _ in range(steps):
            mid = (lo + hi) / 2
            f = flips(mid).cpu()
            hi = torch.where(f, mid, hi)
            lo = torch.where(f, lo, mid)
        res = torch.where(ok, hi, torch.full_like(hi, float("inf")))
        out[idx] = res.numpy()
    return out


def _check_fraction(fraction) -> float:
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float, np.floating)) or not (0 < fraction <= 1):
        raise ValueError(f"fraction={fraction!r}: expected a number in (0, 1]")
    return float(fraction)


def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed={seed!r}: expected a non-negative integer")
    return int(seed)


def _check_vocabulary(vocabulary) -> list[str]:
    """Replacement words, sorted and unique (an empty list is refused)."""
    if isinstance(vocabulary, str) or not hasattr(vocabulary, "__iter__") or not all(isinstance(w, str) and w.strip() for w in vocabulary):
        raise ValueError(f"vocabulary={str(vocabulary)[:80]!r}: expected a list of non-empty word strings")
    if not vocabulary:
        raise ValueError("vocabulary=[]: expected at least one replacement word")
    return sorted(set(vocabulary))


def _substitute(text: str, spans, positions, replacements) -> str:
    pieces, last = [], 0
    for pos, word in sorted(zip(positions, replacements)):
        _, a, b = spans[pos]
        pieces.append(text[last:a])
        pieces.append(word)
        last = b
    pieces.append(text[last:])
    return "".join(pieces)


def random_substitution_flip_rate(
    texts,
    classifier,
    fraction: float = 0.1,
    trials: int = 20,
    seed: int = 0,
    vocabulary=None,
    text_pairs=None,
    batch_size: int = 32,
    progress: bool = False,
) -> dict:
    """Fraction of ``trials`` in which replacing ``fraction`` of the words by random words flips the prediction.

    Paper §4.3 / Fig. 7: 10 % of the words (``max(1, round(fraction * n_words))`` positions, drawn without
    replacement) are replaced by words drawn uniformly from ``vocabulary`` (default: the whole-word
    alphabetic entries of the model's tokenizer vocabulary, ``TextClassifier.word_vocabulary()``; pass the words of your dataset to follow the
    paper exactly). For sentence pairs the positions are drawn over the words of both texts.
    Repeatable: text ``i`` uses ``numpy.random.default_rng([seed, i])``, whatever the batch size.

    Returns ``{"flip_rate": np.ndarray [N], "n_substituted": np.ndarray [N]}``.
    """
    from textxai import words as _words
    from textxai.validation import check_positive_int

    _check_fraction(fraction)
    check_positive_int(trials, "trials")
    _check_seed(seed)
    vocab = None if vocabulary is None else _check_vocabulary(vocabulary)
    texts, pairs, clf = _prepare(texts, classifier, text_pairs, batch_size)
    if vocab is None:
        vocab = sorted(clf.word_vocabulary())
    if not vocab:
        raise ValueError("vocabulary=[]: expected at least one replacement word")
    perturbed, perturbed_pairs, counts = [], [], []
    for i, text in enumerate(texts):
        rng = np.random.default_rng([int(seed), i])
        spans_a = _words.word_spans(text, clf.word_tokenizer)
        spans_b = _words.word_spans(pairs[i], clf.word_tokenizer) if pairs is not None else []
        n_a, n = len(spans_a), len(spans_a) + len(spans_b)
        k = max(1, int(round(fraction * n)))
        counts.append(k)
        for _ in range(trials):
            pos = rng.choice(n, size=k, replace=False)
            rep = [vocab[j] for j in rng.integers(0, len(vocab), size=k)]
            in_a = [(p, w) for p, w in zip(pos, rep) if p < n_a]
            in_b = [(p - n_a, w) for p, w in zip(pos, rep) if p >= n_a]
            perturbed.append(_substitute(text, spans_a, [p for p, _ in in_a], [w for _, w in in_a]))
            if pairs is not None:
                perturbed_pairs.append(_substitute(pairs[i], spans_b, [p for p, _ in in_b], [w for _, w in in_b]))
    base = clf.predict_proba(texts, pairs, batch_size=batch_size).argmax(1)
    pred = clf.predict_proba(perturbed, perturbed_pairs if pairs is not None else None, batch_size=batch_size,
                             progress=progress).argmax(1)
    flips = (pred.reshape(len(texts), trials) != base[:, None]).mean(1)
    return {"flip_rate": flips, "n_substituted": np.asarray(counts)}


def difficulty_correlation(difficulty_values, other, log: bool = True) -> dict:
    """Correlation between difficulty and another per-example quantity (paper Fig. 3, 6, 7), via scipy.

    Pearson's r (on ``log lambda_max`` when ``log``, as in the paper's appendix) with its p-value, and
    Spearman's rho (rank-based, so ``log`` does not change it). Pairs where either value is not finite
    (e.g. ``min_flip_strength == inf``) or lambda_max <= 0 under ``log`` are left out; ``n`` counts the rest.

    >>> r = difficulty_correlation([0.1, 1.0, 10.0, 100.0], [4.0, 3.0, 2.0, 1.0])
    >>> round(r["pearson_r"], 6), round(r["spearman_rho"], 6), r["n"]
    (-1.0, -1.0, 4)
    """
    from scipy import stats

    a = np.asarray(difficulty_values, dtype=np.float64)
    b = np.asarray(other, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"other has shape {b.shape} but difficulty has shape {a.shape}: expected two equal 1-D arrays")
    keep = np.isfinite(a) & np.isfinite(b) & ((a > 0) if log else True)
    x = np.log(a[keep]) if log else a[keep]
    y = b[keep]
    out = {"n": int(keep.sum()), "pearson_r": float("nan"), "pearson_p": float("nan"),
           "spearman_rho": float("nan"), "spearman_p": float("nan")}
    if out["n"] >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0:
        pr = stats.pearsonr(x, y)
        sr = stats.spearmanr(x, y)
        out.update(pearson_r=float(pr.statistic), pearson_p=float(pr.pvalue),
                   spearman_rho=float(sr.statistic), spearman_p=float(sr.pvalue))
    return out


def difficulty_shift(originals, perturbed, classifier, original_pairs=None, perturbed_pairs=None,
                     batch_size: int = 16, progress: bool = False) -> dict:
    """lambda_max(perturbed) - lambda_max(original) per pair (paper §4.4, Fig. 4 / 8).

    Returns ``shift`` ``[N]``, ``difficulty_original``, ``difficulty_perturbed`` and a summary: ``mean``,
    ``std``, ``median`` and ``fraction_increased`` (share of pairs whose difficulty went up).

    >>> difficulty_shift(["a fine film"], ["a dull film"], "textxai/demo-sentiment")["shift"].shape  # doctest: +SKIP
    (1,)
    """
    from textxai.validation import check_same_length, check_texts

    originals = check_texts(originals, "originals")
    perturbed = check_texts(perturbed, "perturbed")
    check_same_length(originals, perturbed, "originals", "perturbed")
    if (original_pairs is None) != (perturbed_pairs is None):
        missing = "original_pairs" if original_pairs is None else "perturbed_pairs"
        raise ValueError(f"{missing}=None: expected text pairs for both originals and perturbed, or for neither")
    if original_pairs is not None:
        check_same_length(originals, check_texts(original_pairs, "original_pairs"), "originals", "original_pairs")
        check_same_length(perturbed, check_texts(perturbed_pairs, "perturbed_pairs"), "perturbed", "perturbed_pairs")
    both_pairs = None if original_pairs is None else list(original_pairs) + list(perturbed_pairs)
    r = difficulty(originals + perturbed, classifier, both_pairs, batch_size=batch_size, progress=progress)
    n = len(originals)
    d0, d1 = r["difficulty"][:n], r["difficulty"][n:]
    shift = d1 - d0
    return {"shift": shift, "difficulty_original": d0, "difficulty_perturbed": d1,
            "mean": float(shift.mean()), "std": float(shift.std()), "median": float(np.median(shift)),
            "fraction_increased": float((shift > 0).mean())}


def perturbed_test_set(texts, classifier, labels=None, size: int = 10, strengths=(0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0),
                       difficulty_values=None, batch_size: int = 16) -> dict:
    """The paper's FIM test set (§5.1, Fig. 2): the ``size`` hardest and ``size`` easiest texts by lambda_max, each
    moved along its top eigenvector by every L2 ``strength``; accuracy of both sets at each strength.

    Accuracy is against ``labels`` (class indices) when given, else against the unperturbed prediction (the
    share of predictions that survive the push). ``difficulty_values``: lambda_max already computed (else
    :func:`difficulty` runs). Costs one forward and backward pass per chosen text plus one forward per strength.

    Returns ``{"strengths": [k], "reference": "labels" | "predictions", "hard": {"indices", "difficulty",
    "accuracy": [k], "kept": [k]}, "easy": {...}}`` (``kept``: the share of unchanged predictions; with labels,
    a push that flips a wrong prediction makes it right, so on a binary task ``accuracy`` of a set whose
    predictions all flip is 1 - its accuracy at 0; with fewer than ``2 * size`` texts the sets split them in half).

    >>> r = perturbed_test_set(["a wonderful film", "dull", "fine, I guess", "great"], "textxai/demo-sentiment", size=1)  # doctest: +SKIP
    >>> len(r["hard"]["accuracy"]) == len(r["strengths"])                                                               # doctest: +SKIP
    True
    """
    from textxai.validation import check_positive_int

    check_positive_int(size, "size")
    grid = np.atleast_1d(np.asarray(strengths, dtype=np.float64))
    if grid.ndim != 1 or grid.size == 0 or not np.isfinite(grid).all() or (grid < 0).any():
        raise ValueError(f"strengths={strengths!r}: expected a non-empty list of finite numbers >= 0")
    texts, _, clf = _prepare(texts, classifier, None, batch_size)
    ref = None if labels is None else _label_ids(labels, clf, len(texts))
    if difficulty_values is None:
        d = difficulty(texts, clf, batch_size=batch_size)["difficulty"]
    else:
        d = np.asarray(difficulty_values, dtype=np.float64)
        if d.shape != (len(texts),):
            raise ValueError(f"difficulty_values has shape {d.shape}: expected one value per text ({len(texts)})")
    k = min(size, len(texts) // 2) or 1
    order = np.argsort(-d, kind="stable")
    out = {"strengths": grid.tolist(), "reference": "predictions" if ref is None else "labels"}
    for name, chosen in (("hard", order[:k]), ("easy", order[::-1][:k])):
        correct, kept = np.zeros((len(chosen), grid.size)), np.zeros((len(chosen), grid.size))
        for row, i in enumerate(chosen):
            probs = perturb_along_eigenvector(texts[i], clf, grid if grid[0] == 0 else np.r_[0.0, grid])
            pushed = probs[-grid.size:].argmax(1)
            kept[row] = pushed == int(probs[0].argmax())
            correct[row] = pushed == (int(probs[0].argmax()) if ref is None else int(ref[i]))
        out[name] = {"indices": [int(i) for i in chosen], "difficulty": [float(d[i]) for i in chosen],
                     "accuracy": correct.mean(0).tolist(), "kept": kept.mean(0).tolist()}
    return out


# ---------------------------------------------------------------------------------------------- compute
# compute() runs in four named stages: _validate (every check; the classifier is loaded, not run) ->
# _model_outputs (difficulty, and the asked-for §4.3 / §4.4 experiments) -> _metrics (summaries,
# correlations, accuracy by difficulty) -> _reduce (one flat dict).


@dataclass(frozen=True)
class FIMOptions:
    """Options of :func:`compute` (each may also be given as a keyword of ``compute``).

    batch_size: texts per forward/backward batch. return_eigenvector / return_all_eigenvalues /
    keep_eigenvectors: as in :func:`difficulty`. min_flip (§4.3, with max_strength, tol): the smallest move
    along the top eigenvector that flips the prediction, see :func:`min_flip_strength`. random_flips (§4.3,
    Fig. 7; with fraction, trials, seed, vocabulary): see :func:`random_substitution_flip_rate`.
    progress: progress bars. shard: a wrapper put around :func:`difficulty` and :func:`min_flip_strength`
    before they run (e.g. ``textxai.parallel.sharded``: data-parallel under accelerate); None runs them as they are.
    """

    batch_size: int = 16
    return_eigenvector: bool = False
    return_all_eigenvalues: bool = False
    keep_eigenvectors: bool = False
    min_flip: bool = False
    max_strength: float = 6.0
    tol: float = 1e-3
    random_flips: bool = False
    fraction: float = 0.1
    trials: int = 20
    seed: int = 0
    vocabulary: tuple | None = None
    progress: bool = False
    shard: Callable | None = None


@dataclass
class _Request:
    texts: list[str]
    pairs: list[str] | None
    classifier: object
    labels: np.ndarray | None
    perturbed: list[str] | None
    perturbed_pairs: list[str] | None
    options: FIMOptions


def _options(options, kwargs) -> FIMOptions:
    from textxai.options import apply_keywords

    return apply_keywords("fim.compute", kwargs, options=(FIMOptions, options))["options"]


def _check_options(opts: FIMOptions) -> None:
    from textxai.validation import check_positive_int

    _check_batch_size(opts.batch_size)
    for name in ("return_eigenvector", "return_all_eigenvalues", "keep_eigenvectors", "min_flip", "random_flips", "progress"):
        if not isinstance(getattr(opts, name), (bool, np.bool_)):
            raise TypeError(f"{name}={getattr(opts, name)!r}: expected True or False")
    if opts.shard is not None and not callable(opts.shard):
        raise TypeError(f"shard={opts.shard!r:.80}: expected a callable fn -> fn, or None")
    if opts.min_flip:
        _check_strength(opts.max_strength, "max_strength")
        _check_strength(opts.tol, "tol")
    if opts.random_flips:
        _check_fraction(opts.fraction)
        check_positive_int(opts.trials, "trials")
        _check_seed(opts.seed)
        if opts.vocabulary is not None:
            _check_vocabulary(opts.vocabulary)


def _label_ids(labels, clf, n: int) -> np.ndarray:
    """Gold labels as class indices: integers as given, label names matched to the model's labels (any case)."""
    from textxai.validation import check_labels, check_list

    labels = check_list(labels, "labels")
    if labels and all(isinstance(x, str) for x in labels):
        labels = [clf.class_index(x, f"labels[{i}]") for i, x in enumerate(labels)]
    return check_labels(labels, "labels", n, clf.num_labels)


def _validate(texts, model, text_pairs, labels, perturbed, perturbed_pairs, tokenizer, device, opts) -> _Request:
    """Stage 1: every check before any model call."""
    from textxai.validation import check_same_length, check_texts

    _check_options(opts)
    texts, pairs, clf = _prepare(texts, model, text_pairs, opts.batch_size, tokenizer, device)
    label_ids = None if labels is None else _label_ids(labels, clf, len(texts))
    if perturbed is not None:
        perturbed = check_texts(perturbed, "perturbed")
        check_same_length(texts, perturbed, "texts", "perturbed")
        if (pairs is None) != (perturbed_pairs is None):
            raise ValueError("perturbed_pairs: expected text pairs for both texts and perturbed, or for neither")
        perturbed, perturbed_pairs, _ = _prepare(perturbed, clf, perturbed_pairs, opts.batch_size)
    elif perturbed_pairs is not None:
        raise ValueError("perturbed_pairs is given without perturbed: expected both or neither")
    return _Request(texts, pairs, clf, label_ids, perturbed, perturbed_pairs, opts)


def _model_outputs(request: _Request) -> dict:
    """Stage 2: lambda_max of every text, and the experiments the options ask for."""
    o, clf, texts, pairs = request.options, request.classifier, request.texts, request.pairs
    wrap = o.shard or (lambda fn: fn)
    out = {"fim": wrap(difficulty)(texts, clf, pairs, batch_size=o.batch_size, return_eigenvector=o.return_eigenvector,
                             return_all_eigenvalues=o.return_all_eigenvalues, progress=o.progress,
                             keep_eigenvectors=o.keep_eigenvectors)}
    if o.min_flip:
        out["min_flip_strength"] = wrap(min_flip_strength)(texts, clf, max_strength=o.max_strength, tol=o.tol,
                                                     text_pairs=pairs, batch_size=o.batch_size, progress=o.progress)
    if o.random_flips:
        vocabulary = None if o.vocabulary is None else list(o.vocabulary)
        out["random"] = random_substitution_flip_rate(texts, clf, fraction=o.fraction, trials=o.trials, seed=o.seed,
                                                      vocabulary=vocabulary, text_pairs=pairs, progress=o.progress)
    if request.perturbed is not None:
        out["perturbed"] = wrap(difficulty)(request.perturbed, clf, request.perturbed_pairs, batch_size=o.batch_size,
                                      progress=o.progress)["difficulty"]
    return out


def _accuracy_by_difficulty(d: np.ndarray, predictions: np.ndarray, labels: np.ndarray) -> dict:
    """Accuracy overall and on the easiest / hardest quarter of the texts (by lambda_max)."""
    correct = predictions == labels
    q = np.quantile(d, [0.25, 0.75])
    return {"all": float(correct.mean()), "easiest_quarter": float(correct[d <= q[0]].mean()),
            "hardest_quarter": float(correct[d >= q[1]].mean())}


def _shift_metrics(d: np.ndarray, d_perturbed: np.ndarray) -> dict:
    shift = d_perturbed - d
    return {"values": shift, "mean": float(shift.mean()), "std": float(shift.std()), "median": float(np.median(shift)),
            "fraction_increased": float((shift > 0).mean()), "difficulty_perturbed": summarize(d_perturbed)}


def _metrics(request: _Request, outputs: dict) -> dict:
    """Stage 3: one entry per metric."""
    d = outputs["fim"]["difficulty"]
    out = {"summary": summarize(d)}
    if request.labels is not None:
        out["accuracy"] = _accuracy_by_difficulty(d, outputs["fim"]["predictions"], request.labels)
    if "min_flip_strength" in outputs:
        s = outputs["min_flip_strength"]
        out.update(min_flip_correlation=difficulty_correlation(d, s), flipped_within_max_strength=float(np.isfinite(s).mean()))
    if "random" in outputs:
        out["random_flip_correlation"] = difficulty_correlation(d, outputs["random"]["flip_rate"])
    if "perturbed" in outputs:
        out["shift"] = _shift_metrics(d, outputs["perturbed"])
    return out


def _reduce(outputs: dict, metrics: dict) -> dict:
    """Stage 4: the per-text arrays and the metrics in one flat dict."""
    out = dict(outputs["fim"])
    if "min_flip_strength" in outputs:
        out["min_flip_strength"] = outputs["min_flip_strength"]
    if "random" in outputs:
        out.update(random_flip_rate=outputs["random"]["flip_rate"], n_substituted=outputs["random"]["n_substituted"])
    out.update(metrics)
    return out


def compute(texts, model, text_pairs=None, labels=None, perturbed=None, perturbed_pairs=None, tokenizer=None,
            device=None, options: FIMOptions | None = None, **kwargs) -> dict:
    """FIM difficulty of every text and the paper's analyses of it, every argument checked before any model call.

    Args:
        texts: the texts (``text_pairs``: second texts of sentence-pair models).
        model: a ``TextClassifier`` or anything ``as_classifier`` accepts (``tokenizer``, ``device`` for loading).
        labels: gold labels (class indices or label names): adds ``accuracy`` overall and on the easiest /
            hardest quarter of the texts.
        perturbed: one perturbed text per text (§4.4; ``perturbed_pairs`` for pairs): adds ``shift``.
        options / keywords: :class:`FIMOptions`.

    Returns what :func:`difficulty` returns (``difficulty``, ``probs``, ``predictions``, ...) plus ``summary``
    (:func:`summarize`); with ``min_flip``: ``min_flip_strength``, ``min_flip_correlation``,
    ``flipped_within_max_strength``; with ``random_flips``: ``random_flip_rate``, ``n_substituted``,
    ``random_flip_correlation``; with ``labels``: ``accuracy``; with ``perturbed``: ``shift``
    (``values``, ``mean``, ``std``, ``median``, ``fraction_increased``, ``difficulty_perturbed``).

    >>> r = compute(["a wonderful film", "dull"], "textxai/demo-sentiment", labels=[1, 0], min_flip=True)  # doctest: +SKIP
    >>> sorted(r["summary"])[:3]                                                                            # doctest: +SKIP
    ['max', 'mean', 'median']
    """
    request = _validate(texts, model, text_pairs, labels, perturbed, perturbed_pairs, tokenizer, device,
                        _options(options, kwargs))
    outputs = _model_outputs(request)
    return _reduce(outputs, _metrics(request, outputs))
