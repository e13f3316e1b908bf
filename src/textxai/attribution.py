"""Word-level feature attributions on any ``TextClassifier`` (gradients through captum; LIME / Kernel SHAP here).

One score per word of ``classifier.words(text, text_pair)``; the attributed quantity is the target class
probability. Subword (token) scores add up to their word's score.

The methods are ONE registry, :data:`REGISTRY` (name -> :class:`AttributionMethod`); ``METHODS`` (names),
TOKI's explainers, the CLI help, the naopc card / Space read it. A new method: one entry here and its
branch in :func:`word_attributions`.

Sampling methods are deterministic under ``seed``.

>>> from textxai.classifier import as_classifier                     # doctest: +SKIP
>>> clf = as_classifier("textxai/demo-sentiment")                    # doctest: +SKIP
>>> word_attributions(["a wonderful film"], clf, "omission")[0].shape  # doctest: +SKIP
(3,)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from textxai.batching import length_sorted_batches
from textxai.classifier import PERTURBATIONS, TextClassifier, as_classifier
from textxai.loading import LRUCache, cache_size
from textxai.validation import check_choice, check_positive_int, check_seed, check_text_pairs, check_texts, short_repr
from textxai.progress import progress_bar

@dataclass(frozen=True)
class AttributionMethod:
    """One attribution method of the registry: its family, a one-line description and its options."""

    name: str
    family: str  # "gradient" (one forward+backward), "perturbation" (N masked inputs), "sampling" (n_samples)
    summary: str
    options: tuple[str, ...] = ()
    default_samples: int | None = None  # n_steps of integrated gradients, n_samples of the sampling methods

    def evaluations(self, n_words: int, samples: int | None = None) -> int:
        """Model evaluations of one explanation of a text of ``n_words`` words (``samples``: steps or samples).

        >>> REGISTRY["omission"].evaluations(10), REGISTRY["lime"].evaluations(10), REGISTRY["gradient"].evaluations(10)
        (11, 5000, 1)
        """
        if self.family == "perturbation":
            return n_words + 1
        if self.default_samples is None:
            return 1
        return int(samples or self.default_samples)


REGISTRY: dict[str, AttributionMethod] = {m.name: m for m in (
    AttributionMethod("gradient", "gradient", "L2 norm of the gradient w.r.t. each token's input embedding, summed "
                      "over the word's tokens (captum Saliency, unsigned)"),
    AttributionMethod("input_x_gradient", "gradient", "embedding x gradient summed over the embedding dimension "
                      "(captum InputXGradient)"),
    AttributionMethod("integrated_gradients", "gradient", "captum IntegratedGradients from an all-mask-token "
                      "baseline (special tokens kept), summed over the embedding dimension", ("n_steps",), 50),
    AttributionMethod("omission", "perturbation", "drop of the target probability when the word alone is removed",
                      ("perturbation", "precision")),
    AttributionMethod("lime", "sampling", "LIME as the lime package's text explainer: word-presence samples, cosine "
                      "kernel of width 0.25, weighted ridge (alpha 1); n_samples=5000 as TOKI",
                      ("n_samples", "perturbation", "kernel_width", "precision", "top_k"), 5000),
    AttributionMethod("kernel_shap", "sampling", "Kernel SHAP: Shapley-kernel coalition sampling, least squares "
                      "(as captum KernelShap); n_samples=1000", ("n_samples", "perturbation", "precision", "top_k"), 1000),
)}
METHODS = tuple(REGISTRY)
GRADIENT_METHODS = tuple(name for name, m in REGISTRY.items() if m.family == "gradient")


def available_methods() -> list[str]:
    """Names accepted by ``word_attributions(method=...)``, in registry order.

    >>> available_methods()
    ['gradient', 'input_x_gradient', 'integrated_gradients', 'omission', 'lime', 'kernel_shap']
    """
    return list(METHODS)


def describe_methods(width: int = 0) -> str:
    """The registry as text lines ``name: summary`` (CLI help, cards)."""
    return "\n".join(f"{name:<{width}}{': ' if not width else ''}{m.summary}" for name, m in REGISTRY.items())


def resolve_targets(target, probs=None, n: int | None = None, num_labels: int | None = None) -> np.ndarray:
    """``"predicted"``, one class index for all, or one per example -> an int array of targets.

    ``probs`` are the [n, C] probabilities of the intact inputs, needed for ``"predicted"`` only; explicit
    targets are checked against ``n`` and ``num_labels`` (taken from ``probs`` when given).
    """
    if isinstance(target, str):
        check_choice(target, "target", ["predicted"])
        return np.asarray(probs).argmax(axis=1)
    if probs is not None:
        n, num_labels = np.asarray(probs).shape
    targets = np.asarray(target)
    if targets.ndim == 0:
        targets = np.full(n, targets)
    if targets.shape != (n,) or not np.issubdtype(targets.dtype, np.integer):
        raise ValueError(f"target={target!r:.80}: expected 'predicted', a class index, or one class index per text ({n})")
    bad = targets[(targets < 0) | (targets >= num_labels)]
    if bad.size:
        raise ValueError(f"target={int(bad[0])} is out of range: the model has {num_labels} classes (0..{num_labels - 1})")
    return targets.astype(np.int64)


def _to_words(token_scores: np.ndarray, word_ids: np.ndarray, n_words: int) -> np.ndarray:
    scores = np.zeros(n_words, dtype=np.float64)
    in_word = word_ids >= 0
    np.add.at(scores, word_ids[in_word], token_scores[: len(word_ids)][in_word])
    return scores


def _gradient_attributions(clf: TextClassifier, texts, pairs, targets, method, batch_size, progress, n_steps=50):
    from captum.attr import InputXGradient, IntegratedGradients, Saliency

    extra_keys = list(clf.input_names)  # input_ids too: the classifier swaps embeddings in at its embedding layer

    def forward(embeds, *extra):
        tensors = dict(zip(extra_keys, extra))
        return clf.probabilities(clf.logits_from_embeddings(embeds, tensors))  # softmax, or per-label sigmoid

    out: list[np.ndarray] = [None] * len(texts)  # type: ignore[list-item]
    lengths = [len(e.input_ids) for e in clf.word_encodings(texts, pairs)]   # tokens (the encodings are cached)
    # on a CPU at most clf.batch_tokens per forward and backward pass (32 texts of 400 words held ~2 GB)
    for chunk in length_sorted_batches(lengths, batch_size, progress, method, max_tokens=clf.batch_tokens):
        encoding = clf.encode([texts[i] for i in chunk], [pairs[i] for i in chunk] if pairs else None)
        tensors = encoding.tensors
        with torch.no_grad():
            embeds = clf.input_embeddings(tensors).detach()
        embeds.requires_grad_()
        extra = tuple(tensors[k] for k in extra_keys)
        target = torch.as_tensor(targets[chunk], device=clf.device)
        if method == "gradient":
            grads = Saliency(forward).attribute(embeds, target=target, abs=False, additional_forward_args=extra)
            token_scores = grads.norm(dim=-1)
        elif method == "input_x_gradient":
            token_scores = InputXGradient(forward).attribute(embeds, target=target, additional_forward_args=extra).sum(-1)
        else:
            ids = tensors["input_ids"].clone()
            is_word = torch.zeros_like(ids, dtype=torch.bool)
            for row, word_ids in enumerate(encoding.word_ids):
                is_word[row, : len(word_ids)] = torch.as_tensor(word_ids >= 0)
            baseline_id = clf.mask_token_id if clf.mask_token_id is not None else clf.tokenizer.pad_token_id
            with torch.no_grad():
                baseline = clf.input_embeddings({"input_ids": torch.where(is_word, baseline_id, ids)}).detach()
            token_scores = IntegratedGradients(forward).attribute(
                embeds, baselines=baseline, target=target, additional_forward_args=extra, n_steps=n_steps,
                internal_batch_size=clf.rows_per_batch(batch_size, ids.shape[1]),
            ).sum(-1)
        token_scores = token_scores.detach().double().cpu().numpy()
        for row, i in enumerate(chunk):
            out[i] = _to_words(token_scores[row], encoding.word_ids[row], len(encoding.words[row]))
    return out


def _omission(clf: TextClassifier, texts, pairs, probs, targets, batch_size, perturbation="mask", progress=False,
              precision="float32"):
    encodings = clf.word_encodings(texts, pairs)
    masks = [np.eye(e.n_words, dtype=bool) for e in encodings]
    masked = clf.masked_proba_many(texts, masks, pairs, batch_size=batch_size, perturbation=perturbation,
                                   progress=progress, precision=precision)
    return [probs[i, targets[i]] - m[:, targets[i]] for i, m in enumerate(masked)]


# ------------------------------------------------------------------------------------ sampling methods
# LIME and Kernel SHAP are written here rather than through captum (captum's Lime / KernelShap were 2x slower
# than the lime package): captum calls the model once per batch of perturbations of ONE input, re-evaluates
# identical masks, and fits the surrogate with scikit-learn per input. Here every text's masks are drawn
# first, identical masks of a text are evaluated once (LIME removes k ~ U{1..n} words, so a 12-word text has
# ~2,100 distinct masks among 5,000 samples, a 10-word one ~950; Kernel SHAP's kernel favours k = 1 and n-1),
# the masks of many texts go to the classifier together in length-sorted batches filled to BATCH_TOKENS
# tokens, and the weighted ridge / least squares surrogate is solved in closed form. The model forward is
# all the time there is, so it runs in bfloat16 where the hardware has it (precision="auto", see
# TextClassifier.resolve_precision): about 3x faster per input on this CPU (AVX512-BF16), a probability moves by
# 0.0008 on average (at most 0.01) on the demo model, an order below LIME's seed-to-seed noise at 5,000 samples
# (tests/test_attribution.py checks both). bench/report.py measures it all against the `lime` package and captum.
def lime_samples(rng: np.random.Generator, n_words: int, n_samples: int) -> np.ndarray:
    """LIME's text sampling (the ``lime`` package's ``LimeTextExplainer``): presence masks ``[n_samples, n]``.

    The first row is the intact text; each other row removes ``k ~ U{1..n}`` distinct random words.

    >>> m = lime_samples(np.random.default_rng(0), 5, 4)
    >>> m.shape, bool(m[0].all()), bool((~m[1:]).any(axis=1).all())
    ((4, 5), True, True)
    """
    present = np.ones((n_samples, n_words), dtype=bool)
    sizes = rng.integers(1, n_words + 1, n_samples - 1)
    for row, k in enumerate(sizes, start=1):
        present[row, rng.choice(n_words, k, replace=False)] = False
    return present


def lime_distinct_masks(n_words: int, n_samples: int) -> float:
    """Expected number of distinct masks among ``n_samples`` LIME samples of an ``n_words`` text (the model
    inputs LIME costs here): sum over k of C(n, k) (1 - (1 - 1 / (n C(n, k)))^(n_samples - 1)), plus the intact text.

    >>> [round(lime_distinct_masks(n, 5000)) for n in (8, 10, 12, 16, 20, 30)]
    [256, 947, 2078, 3450, 3998, 4496]
    """
    from math import comb

    return 1 + sum(comb(n_words, k) * -np.expm1((n_samples - 1) * np.log1p(-1 / (n_words * comb(n_words, k))))
                   for k in range(1, n_words + 1))


def lime_weights(present: np.ndarray, kernel_width: float = 0.25) -> np.ndarray:
    """The ``lime`` package's text kernel: ``sqrt(exp(-d^2 / w^2))``, d = cosine distance to the intact text.

    (lime writes it as distance x 100 and width 25.) A row with no word left is at distance 1.

    >>> lime_weights(np.array([[True, True], [True, False], [False, False]])).round(4).tolist()
    [1.0, 0.5034, 0.0003]
    """
    kept = present.sum(axis=1)
    distance = 1.0 - np.sqrt(kept / present.shape[1])
    return np.sqrt(np.exp(-(distance ** 2) / kernel_width ** 2))


def kernel_shap_samples(rng: np.random.Generator, n_words: int, n_samples: int) -> np.ndarray:
    """Kernel SHAP coalitions as captum's ``KernelShap`` draws them: k present words with probability
    proportional to the Shapley kernel ``(n - 1) / (k (n - k))``, k = 1..n-1 (uniform weights afterwards).

    >>> kernel_shap_samples(np.random.default_rng(0), 4, 3).sum(axis=1).tolist()
    [3, 1, 1]
    """
    if n_words == 1:
        return rng.integers(0, 2, (n_samples, 1)).astype(bool)
    k = np.arange(1, n_words)
    p = (n_words - 1) / (k * (n_words - k))
    sizes = rng.choice(k, n_samples, p=p / p.sum())
    present = np.zeros((n_samples, n_words), dtype=bool)
    for row, size in enumerate(sizes):
        present[row, rng.choice(n_words, size, replace=False)] = True
    return present


def weighted_ridge(x: np.ndarray, y: np.ndarray, weights: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """Coefficients of ``min sum_i w_i (y_i - b - x_i . beta)^2 + alpha |beta|^2`` (intercept b free), in
    closed form: the weighted centring of scikit-learn's ``Ridge(alpha).fit(x, y, sample_weight=w)``.

    >>> x = np.array([[0., 0.], [1., 0.], [0., 1.], [1., 1.]]); y = x @ [2., -1.] + 0.5
    >>> weighted_ridge(x, y, np.ones(4), alpha=0.0).round(6).tolist()
    [2.0, -1.0]
    """
    w = weights / weights.sum()
    xc = x - w @ x
    yc = y - w @ y
    gram = xc.T @ (xc * weights[:, None]) + alpha * np.eye(x.shape[1])
    return np.linalg.solve(gram, xc.T @ (weights * yc)) if alpha > 0 else np.linalg.lstsq(
        xc * np.sqrt(weights)[:, None], np.sqrt(weights) * yc, rcond=None)[0]


@dataclass(frozen=True)
class SamplingOptions:
    """How a sampling method explains one text: ``method`` ("lime" | "kernel_shap"), ``n_samples`` masks drawn
    with ``seed`` (the same seed for every text: a text's explanation does not depend on its neighbours),
    words removed by ``perturbation``, LIME's ``kernel_width``, the forward passes' ``precision``."""

    method: str
    n_samples: int
    seed: int = 0
    perturbation: str = "mask"
    kernel_width: float = 0.25
    precision: str = "auto"

    def plan(self, n_words: int) -> tuple[np.ndarray, np.ndarray, float]:
        """Presence masks ``[n_samples, n_words]``, their surrogate weights and the ridge alpha of one text."""
        rng = np.random.default_rng(self.seed)
        if self.method == "lime":
            present = lime_samples(rng, n_words, self.n_samples)
            return present, lime_weights(present, self.kernel_width), 1.0
        present = kernel_shap_samples(rng, n_words, self.n_samples)
        return present, np.ones(len(present)), 0.0

    def weights(self, present: np.ndarray, importance: bool = False) -> tuple[np.ndarray, float]:
        """The surrogate's row weights and ridge alpha for ``present`` (LIME's kernel; Kernel SHAP: uniform, 0);
        ``importance``: LIME rows drawn from :func:`lime_importance` (n_samples="auto"), each weight times p / q."""
        if self.method == "lime":
            weights = lime_weights(present, self.kernel_width)
            if importance:
                weights = weights * lime_importance_ratio(present, self.kernel_width)
            return weights, 1.0
        return np.ones(len(present)), 0.0


SAMPLES_PER_CALL = 1 << 15  # perturbed inputs per classifier call (several texts together; bounds memory)
# Tokens per forward batch of perturbed inputs: batches of short inputs are filled up to this (inference only),
# by each batch's own longest row (with words deleted the rows of one text run from a few tokens to all of them).
# On the 2 idle cores here (demo MiniLM, rows of 15-45 tokens) 2,048-4,096 tokens per batch were the fastest in
# float32 and in bfloat16; 16,384 cost 5-20 % more, 512 (rows one by one for long texts) up to 20 % more. LIME
# deleting words of a 200-word review, 1,000 samples, float32: 13.2 s filled per batch, 14.5-14.9 s at 32 rows.
# On a CPU the classifier caps every batch at batching.CPU_BATCH_TOKENS (2,048), so there batches fill to that.
BATCH_TOKENS = 1 << 12


def _sampling_attributions(clf: TextClassifier, texts, pairs, targets, options: SamplingOptions, batch_size: int,
                           progress: bool) -> list[tuple[np.ndarray, int]]:
    """Each text's surrogate scores and its model inputs (distinct masks) at ``options.n_samples`` samples."""
    encodings = clf.word_encodings(texts, pairs)
    out: list[tuple[np.ndarray, int]] = [(np.zeros(0), 0)] * len(texts)
    chunks, chunk, size = [], [], 0
    for i in (i for i, e in enumerate(encodings) if e.n_words > 0):  # whole texts per call, <= SAMPLES_PER_CALL masks
        if chunk and size + options.n_samples > SAMPLES_PER_CALL:
            chunks.append(chunk)
            chunk, size = [], 0
        chunk.append(i)
        size += options.n_samples
    if chunk:
        chunks.append(chunk)
    for chunk in progress_bar(chunks, progress, options.method, unit="chunk"):
        plans = [options.plan(encodings[i].n_words) for i in chunk]
        uniques = [np.unique(present, axis=0, return_inverse=True) for present, _, _ in plans]  # each mask once
        probs = clf.masked_proba_many([texts[i] for i in chunk], [~u for u, _ in uniques],
                                      None if pairs is None else [pairs[i] for i in chunk], batch_size=batch_size,
                                      perturbation=options.perturbation, precision=options.precision,
                                      fill_tokens=BATCH_TOKENS)
        for i, (present, weights, alpha), (unique, inverse), p in zip(chunk, plans, uniques, probs):
            y = p[:, int(targets[i])][inverse.reshape(-1)]
            out[i] = (weighted_ridge(present.astype(float), y, weights, alpha), len(unique))
    return out


# ------------------------------------------------------------------------------- adaptive sample count
# n_samples="auto" (lime, kernel_shap): the masks come in rounds of ROUND_SAMPLES as antithetic pairs, a mask and its
# complement. LIME's k ~ U{1..n} removed words and Kernel SHAP's Shapley kernel are both symmetric under k <-> n - k,
# so every row still follows the method's own distribution (and the surrogate estimates the method's own scores);
# the sizes of a round are stratified over that distribution. A text stops after the first round (with at least
# 2 (n + 1) rows for n words: the sandwich below needs them) where
#  (a) its top-k words are settled: 64 draws from the estimated sampling distribution of its scores (the sandwich
#      covariance of the surrogate over its pairs) share >= STABLE_TOP_K of their top-k words with it, on average; or
#  (b) its scores are as precise as the method's default count of independent samples (lime 5,000) makes them: the
#      estimated variance of its 2k highest scores over its pairs is at most the variance the same rows read as
#      independent samples give, scaled from n rows to the default count (n / default);
# or at the default count. bench/report.py measures it against the lime package (top-5 overlap with lime vs lime's
# own seed-to-seed overlap, model inputs).
ROUND_SAMPLES = 250
STABLE_TOP_K = 0.95
STABILITY_DRAWS = 64


@dataclass
class SamplingExplanation:
    """One text's sampling explanation: ``scores`` per word, the ``samples`` (surrogate rows) it used and the model
    ``inputs`` they cost (distinct masks; fewer than the samples on short texts), and why it ``stopped``: "fixed"
    (n_samples given), "settled" (top-k stable), "precise" (as precise as the default count), "limit" (the default
    count reached) or "empty" (a text without words)."""

    scores: np.ndarray
    samples: int
    inputs: int
    stopped: str = "fixed"

    def copy(self) -> "SamplingExplanation":
        return SamplingExplanation(np.array(self.scores, copy=True), self.samples, self.inputs, self.stopped)


def lime_importance(n_words: int, kernel_width: float = 0.25) -> np.ndarray:
    """The distribution n_samples="auto" draws LIME's number of present words from, ``q[s]`` for s = 0..n (s = n:
    the intact text, the complement of s = 0), symmetric under s <-> n - s (so a mask's complement follows it too).

    LIME draws s uniformly and weighs rows by its kernel; a row's share of the scores' variance grows with its
    kernel weight w(s) and with the spread of its presence vector, f (1 - f) for f = (n - s) / n removed, and falls
    with the residual of the linear surrogate, which grows as words go. ``sqrt(w f (1 - f))``, made symmetric and
    floored at 5 % of its peak, followed the measured per-row variance of a 200-word review within ~20 % (bench:
    the variance of LIME's scores falls to ~0.88 of uniform sizes at equal rows, sandwich estimate over 5,000
    rows). The surrogate weighs each row by p / q (:func:`lime_importance_ratio`): the same estimand as LIME's.

    >>> q = lime_importance(10); bool(np.allclose(q, q[::-1])), round(float(q.sum()), 6), int(q.argmax()) in (4, 5, 6)
    (True, 1.0, True)
    """
    s = np.arange(n_words + 1)
    removed = (n_words - s) / max(n_words, 1)
    kept = s / max(n_words, 1)
    w = np.sqrt(np.exp(-((1.0 - np.sqrt(kept)) ** 2) / kernel_width ** 2))
    t = np.sqrt(w * removed * (1.0 - removed))
    g = (t + t[::-1]) / 2
    g = np.maximum(g, 0.05 * g.max()) if g.max() > 0 else np.ones_like(g)
    return g / g.sum()


def lime_importance_ratio(present: np.ndarray, kernel_width: float = 0.25) -> np.ndarray:
    """p / q of each row: LIME's uniform size probability 1 / n over :func:`lime_importance` of the row's number
    of present words (the first-half rows are drawn from q over s = 0..n-1, their complements from q over 1..n)."""
    n_words = present.shape[1]
    q = lime_importance(n_words, kernel_width)
    # a first-half row has s present with probability q[s] / (1 - q[n]); its complement n - s, with the same
    # probability, which is q[n - s] / (1 - q[n]) by symmetry: every row's is q[its s] / (1 - q[n])
    return (1.0 / n_words) * (1.0 - q[n_words]) / q[present.sum(axis=1)]


def paired_samples(rng: np.random.Generator, method: str, n_words: int, n_pairs: int,
                   kernel_width: float | None = None) -> np.ndarray:
    """``n_pairs`` presence masks of ``method`` ("lime" | "kernel_shap") then their complements ``[2 n_pairs, n]``:
    the number of present words stratified over the method's distribution (LIME: n - k, k ~ U{1..n}; Kernel SHAP:
    k present with probability proportional to the Shapley kernel), the words drawn at random. LIME with a
    ``kernel_width``: the number present drawn from :func:`lime_importance` instead (the surrogate then weighs each
    row by :func:`lime_importance_ratio`).

    >>> m = paired_samples(np.random.default_rng(0), "lime", 6, 3)
    >>> m.shape, bool((m[:3] == ~m[3:]).all()), bool((m[:3].sum(axis=1) + m[3:].sum(axis=1) == 6).all())
    ((6, 6), True, True)
    """
    if method == "lime":
        sizes, p = np.arange(n_words), np.full(n_words, 1.0 / n_words)  # present = n - removed, removed ~ U{1..n}
        if kernel_width is not None:
            p = lime_importance(n_words, kernel_width)[:n_words]
            p = p / p.sum()
    elif n_words == 1:
        sizes, p = np.array([1]), np.array([1.0])
    else:
        sizes = np.arange(1, n_words)
        p = (n_words - 1) / (sizes * (n_words - sizes))
        p = p / p.sum()
    u = (rng.permutation(n_pairs) + rng.random(n_pairs)) / n_pairs  # one draw per stratum of [0, 1)
    drawn = sizes[np.minimum(np.searchsorted(np.cumsum(p), u, side="right"), len(sizes) - 1)]
    present = np.zeros((n_pairs, n_words), dtype=bool)
    for row, size in enumerate(drawn):
        present[row, rng.choice(n_words, size, replace=False)] = True
    return np.concatenate([present, ~present])


def _sandwich(present: np.ndarray, y: np.ndarray, weights: np.ndarray, alpha: float, pair: np.ndarray):
    """The weighted ridge surrogate's scores, its inverse Gram, each row's term of its estimating equation, the
    sandwich covariance over the pairs and the degrees-of-freedom factor."""
    x = present.astype(float)
    total = weights.sum()
    xc = x - (weights @ x) / total
    yc = y - (weights @ y) / total
    inverse = np.linalg.pinv(xc.T @ (xc * weights[:, None]) + alpha * np.eye(x.shape[1]))
    beta = inverse @ (xc.T @ (weights * yc))
    rows = xc * (weights * (yc - xc @ beta))[:, None]  # each row's term of the surrogate's estimating equation
    pairs = np.zeros((int(pair.max()) + 1, x.shape[1]))
    np.add.at(pairs, pair, rows)
    # the fitted residuals are smaller than the true ones by the surrogate's degrees of freedom (n rows, p words:
    # the hat matrix's trace): the sandwich is scaled by n / (n - p) (HC1), and needs n >= 2p (callers check)
    dof = len(y) / max(len(y) - x.shape[1] - 1, 1)
    return beta, inverse, rows, dof * inverse @ (pairs.T @ pairs) @ inverse, dof


def shrink_to_prior(beta: np.ndarray, variance: np.ndarray, prior: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Empirical-Bayes scores: each sampled score ``beta`` (with its ``variance``) pulled toward ``a + b prior``
    (the line of the scores on the prior, e.g. omission's drops) by ``tau2 / (tau2 + variance)``, ``tau2`` the
    scores' spread around that line beyond their sampling variance; -> (scores, their posterior variance).

    As samples grow the variance goes to 0 and the scores to the surrogate's own (the prior only lends strength
    while they are noisy; BayLIME, Zhao et al. 2021, uses a prior the same way).

    >>> s, v = shrink_to_prior(np.array([1.0, 2.0, 3.5]), np.zeros(3), np.array([1.0, 2.0, 3.0]))
    >>> s.tolist(), v.tolist()
    ([1.0, 2.0, 3.5], [0.0, 0.0, 0.0])
    """
    line = np.column_stack([np.ones_like(prior), prior])
    mean = line @ np.linalg.lstsq(line, beta, rcond=None)[0]
    tau2 = max(float(np.mean((beta - mean) ** 2) - np.mean(variance)), 1e-12 * max(float(np.var(beta)), 1e-30))
    gain = tau2 / (tau2 + np.clip(variance, 0, None))
    return mean + gain * (beta - mean), gain * np.clip(variance, 0, None)


def sampling_scores(present: np.ndarray, y: np.ndarray, weights: np.ndarray, alpha: float, pair: np.ndarray,
                    prior: np.ndarray | None = None) -> np.ndarray:
    """A sample's scores: the weighted ridge surrogate's, shrunk toward ``prior`` (:func:`shrink_to_prior`) when given."""
    if prior is None:
        return weighted_ridge(present.astype(float), y, weights, alpha)
    beta, _, _, cov_pairs, _ = _sandwich(present, y, weights, alpha, pair)
    return shrink_to_prior(beta, np.diag(cov_pairs), prior)[0]


def sampling_settled(present: np.ndarray, y: np.ndarray, weights: np.ndarray, alpha: float, pair: np.ndarray,
                     top_k: int, default_samples: int, rng: np.random.Generator,
                     ratio: np.ndarray | None = None, prior: np.ndarray | None = None) -> str | None:
    """Whether a paired sample suffices: "settled" (its top-k words stable, rule (a) above), "precise" (rule (b)),
    or None. ``pair``: the pair index of every row; the surrogate is the weighted ridge of :func:`weighted_ridge`.
    ``ratio``: p / q of each row when the rows were drawn from q (importance weights, already in ``weights``): rule
    (b) then compares with the method's own independent samples (drawn from p), a row's term divided by sqrt(p / q).
    ``prior``: the scores are shrunk toward it (:func:`shrink_to_prior`); both rules read the shrunk scores and
    their posterior variances.

    On an exactly additive model there is no residual: the scores are known without error and a sample settles.
    """
    beta, inverse, rows, cov_pairs, dof = _sandwich(present, y, weights, alpha, pair)
    k = min(top_k, len(beta))
    scale = np.sqrt(np.clip(np.diag(cov_pairs), 0, None))
    noise = float(scale.max()) if scale.size else 0.0
    if noise <= 1e-12 * max(1.0, float(np.abs(beta).max())):
        return "settled"
    if prior is not None:
        beta, variance = shrink_to_prior(beta, np.diag(cov_pairs), prior)
        cov_pairs = np.diag(variance)
    top = np.argsort(-beta, kind="stable")[:k]
    values, vectors = np.linalg.eigh(cov_pairs)
    draws = beta + (rng.standard_normal((STABILITY_DRAWS, len(beta))) * np.sqrt(np.clip(values, 0, None))) @ vectors.T
    shared = np.mean([np.isin(np.argsort(-d, kind="stable")[:k], top).sum() / k for d in draws])
    if shared >= STABLE_TOP_K:
        return "settled"
    best = np.argsort(-beta, kind="stable")[: 2 * k]
    if ratio is not None:  # E_p[u u'] = E_q[(p / q) u_p u_p'] with u_p = u / (p / q): rows / sqrt(p / q)
        rows = rows / np.sqrt(ratio)[:, None]
    cov_rows = dof * inverse @ (rows.T @ rows) @ inverse
    if np.diag(cov_pairs)[best].sum() <= np.diag(cov_rows)[best].sum() * len(y) / default_samples:
        return "precise"
    return None


LIME_PRIOR_WORDS = 3  # LIME n_samples="auto" on texts of at least this many words: scores shrunk toward omission's


def _uses_prior(options: SamplingOptions, n_words: int) -> bool:
    """Whether n_samples="auto" shrinks this text's scores toward omission's drops (LIME, >= LIME_PRIOR_WORDS words)."""
    return options.method == "lime" and n_words >= LIME_PRIOR_WORDS


def _adaptive_sampling(clf: TextClassifier, texts, pairs, targets, options: SamplingOptions, batch_size: int,
                       progress: bool, top_k: int) -> list[SamplingExplanation]:
    """n_samples="auto": rounds of paired masks for every text not yet settled, all of a round's new masks through
    the model together; each text's scores from all of its rows (see the comment above)."""
    encodings = clf.word_encodings(texts, pairs)
    limit = REGISTRY[options.method].default_samples
    out = [SamplingExplanation(np.zeros(0), 0, 0, "empty") for _ in texts]
    state = {i: {"rng": np.random.default_rng(options.seed), "present": [], "pair": [], "known": {}, "y": []}
             for i, e in enumerate(encodings) if e.n_words > 0}
    active = list(state)
    n_round = 0
    while active:
        n_pairs = min(ROUND_SAMPLES, limit - n_round * ROUND_SAMPLES) // 2
        news, todo = {}, {}
        for i in active:
            s = state[i]
            masks = paired_samples(s["rng"], options.method, encodings[i].n_words, n_pairs,
                                   options.kernel_width if options.method == "lime" else None)
            if options.method == "lime" and n_round == 0:
                masks[0], masks[n_pairs] = True, False  # lime's first row: the intact text (its pair: the empty one)
            keys = [np.packbits(m).tobytes() for m in masks]
            unseen = dict.fromkeys(k for k in keys if k not in s["known"])
            news[i] = (masks, keys)
            todo[i] = [masks[keys.index(k)] for k in unseen]
            if n_round == 0 and _uses_prior(options, encodings[i].n_words):  # omission's single deletions: the prior
                single = ~np.eye(encodings[i].n_words, dtype=bool)
                todo[i] += [m for m in single if np.packbits(m).tobytes() not in unseen]
        calls, call, size = [], [], 0
        for i in active:  # whole texts per call, <= SAMPLES_PER_CALL masks
            if call and size + len(todo[i]) > SAMPLES_PER_CALL:
                calls.append(call)
                call, size = [], 0
            call.append(i)
            size += len(todo[i])
        calls.append(call)
        for call in calls:
            asked = [i for i in call if todo[i]]
            if not asked:
                continue
            probs = clf.masked_proba_many([texts[i] for i in asked], [~np.array(todo[i]) for i in asked],
                                          None if pairs is None else [pairs[i] for i in asked], batch_size=batch_size,
                                          perturbation=options.perturbation, precision=options.precision,
                                          fill_tokens=BATCH_TOKENS, progress=progress)
            for i, p in zip(asked, probs):
                for mask, value in zip(todo[i], p[:, int(targets[i])]):
                    state[i]["known"][np.packbits(mask).tobytes()] = float(value)
        still = []
        for i in active:
            s = state[i]
            masks, keys = news[i]
            s["present"].append(masks)
            s["y"].append([s["known"][k] for k in keys])
            s["pair"].append(np.tile(np.arange(n_pairs), 2) + n_round * (ROUND_SAMPLES // 2))
            if n_round == 0 and _uses_prior(options, encodings[i].n_words):
                single = ~np.eye(encodings[i].n_words, dtype=bool)
                s["prior"] = s["known"][keys[0]] - np.array([s["known"][np.packbits(m).tobytes()] for m in single])
            present, y = np.concatenate(s["present"]), np.concatenate(s["y"])
            pair, prior = np.concatenate(s["pair"]), s.get("prior")
            weights, alpha = options.weights(present, importance=True)
            if len(present) + 2 > limit:
                stopped = "limit"
            elif len(present) < 2 * (encodings[i].n_words + 1) and len(s["known"]) < 1 << min(encodings[i].n_words, 62):
                stopped = None  # the sandwich needs rows >= 2 p (unless every mask of the text is known)
            else:
                stopped = sampling_settled(present, y, weights, alpha, pair, top_k, limit,
                                           np.random.default_rng([options.seed, n_round]),
                                           lime_importance_ratio(present, options.kernel_width)
                                           if options.method == "lime" else None, prior)
            if stopped is None:
                still.append(i)
            else:
                out[i] = SamplingExplanation(sampling_scores(present, y, weights, alpha, pair, prior), len(present),
                                             len(s["known"]), stopped)
        active = still
        n_round += 1
    return out


def word_attributions(texts, classifier, method: str = "integrated_gradients", target="predicted", text_pairs=None,
                      seed: int = 0, batch_size: int = 32, progress: bool = False, **options) -> list[np.ndarray]:
    """One attribution score per word of each text (aligned with ``classifier.words(text, text_pair)``).

    Args:
        texts: list of strings.
        classifier: a ``TextClassifier`` or anything ``as_classifier`` accepts.
        method: one of ``available_methods()``.
        target: ``"predicted"`` (default), a class index, or one class index per text.
        text_pairs: second texts for sentence-pair models.
        seed: seed of the sampling methods (lime, kernel_shap).
        batch_size: inputs per forward pass; lime / kernel_shap fill batches of short texts up to
            ``BATCH_TOKENS`` tokens (inference only), so it is a lower bound there.
        options: ``n_samples`` (lime 5000, kernel_shap 1000), ``n_steps`` (integrated_gradients, 50),
            ``perturbation`` ("mask" | "delete": how omission / lime / kernel_shap remove words),
            ``precision`` of lime / kernel_shap / omission's forward passes ("auto": bfloat16 where the hardware
            has it and the model agrees, see ``TextClassifier.resolve_precision``; "float32" for the model's
            exact probabilities; "bfloat16"; default "auto" for the sampling methods, "float32" for omission,
            whose intact probability then comes from the same precision); lime / kernel_shap:
            ``n_samples="auto"`` draws paired masks in rounds until the ``top_k`` words (default 5) are settled or the
            scores are as precise as the default count would make them, at most that count (see
            :func:`sampling_explanations`, which also reports the samples each text used).
    """
    return [r.scores if isinstance(r, SamplingExplanation) else r for r in _explanations(
        texts, classifier, method, target, text_pairs, seed, batch_size, progress, options)]


def sampling_explanations(texts, classifier, method: str = "lime", target="predicted", text_pairs=None, seed: int = 0,
                          batch_size: int = 32, progress: bool = False, **options) -> list[SamplingExplanation]:
    """:func:`word_attributions` of a sampling method ("lime" | "kernel_shap") with what each text cost: one
    :class:`SamplingExplanation` per text (``scores``, ``samples``, model ``inputs``, why it ``stopped``).

    With ``n_samples="auto"`` the samples differ per text: rounds of 250 paired masks until its top-``top_k`` words
    are settled, or its scores are as precise as the default count of independent samples makes them (lime 5,000,
    kernel_shap 1,000), at most that count.
    """
    check_choice(method, "method", ("lime", "kernel_shap"))
    return _explanations(texts, classifier, method, target, text_pairs, seed, batch_size, progress, options)


def _explanations(texts, classifier, method, target, text_pairs, seed, batch_size, progress, options) -> list:
    texts = check_texts(texts)
    pairs = check_text_pairs(text_pairs, texts)
    check_choice(method, "method", METHODS)
    check_positive_int(batch_size, "batch_size")
    allowed = {o for m in REGISTRY.values() for o in m.options}  # each method reads its own, ignores the rest
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise TypeError(f"unknown option(s) {unknown} for word_attributions; expected some of {sorted(allowed)}")
    _check_options(seed, options)
    clf = as_classifier(classifier)
    # p(x): omission's intact probability (in its own precision), or to find the predicted class; with the targets
    # given, omission reads it for the texts it has not explained yet only (inside compute)
    intact = _precision(clf, method, options) if method == "omission" else "float32"
    probs = None
    if isinstance(target, str):
        probs = clf.predict_proba(texts, pairs, batch_size=batch_size, precision=intact)
    targets = resolve_targets(target, probs, n=len(texts), num_labels=clf.num_labels)

    def compute(idx):
        sub, sub_pairs = [texts[i] for i in idx], None if pairs is None else [pairs[i] for i in idx]
        p = probs[idx] if probs is not None else (
            clf.predict_proba(sub, sub_pairs, batch_size=batch_size, precision=intact) if method == "omission" else None)
        return _attributions(clf, sub, sub_pairs, p, targets[idx], method, seed, batch_size, progress, options)

    if method in ("omission", "lime", "kernel_shap"):
        return _remembered(clf, texts, pairs, targets, _settings(clf, method, seed, options), compute)
    return compute(np.arange(len(texts)))


def _check_options(seed, options: dict) -> None:
    """Every option of :func:`word_attributions` before any model call (a ValueError naming it)."""
    import math

    check_seed(seed)
    for name in ("n_samples", "n_steps", "top_k"):
        if name in options and not (name == "n_samples" and isinstance(options[name], str) and options[name] == "auto"):
            if name == "n_samples" and isinstance(options[name], str):
                raise ValueError(f"n_samples={short_repr(options[name])}: expected a positive integer or 'auto' (as "
                                 "many as the top-k words need, at most the method's default)")
            check_positive_int(options[name], name)
    if "top_k" in options and options.get("n_samples") != "auto":
        raise ValueError(f"top_k={short_repr(options['top_k'])}: top_k sets when n_samples='auto' stops; "
                         f"expected it with n_samples='auto' only (n_samples={short_repr(options.get('n_samples'))})")
    if "perturbation" in options:
        check_choice(options["perturbation"], "perturbation", PERTURBATIONS)
    width = options.get("kernel_width", 0.25)
    if isinstance(width, (bool, np.bool_)) or not isinstance(width, (int, float, np.integer, np.floating)) or not (
            math.isfinite(width) and width > 0):
        raise ValueError(f"kernel_width={short_repr(width)}: expected a positive finite number (LIME's kernel width, "
                         "default 0.25)")


# ------------------------------------------------------------------------------- explanations remembered
# The perturbation methods' explanations of a text are remembered in this process (bounded LRU, keyed by the
# model's weights, the text, its target and every option that changes the scores): a pipeline that explains
# the same texts twice - TOKI's assessment, then the attack's omission ranking of the same texts; an audit's
# stages - computes each explanation once. A text's scores never depend on the other texts of the call
# (sampling: the same seed for every text), so the remembered ones equal a new computation (up to the float
# rounding of other batch neighbours). ``TEXTXAI_EXPLANATION_CACHE`` bounds it (texts; default 4,096).
_EXPLANATIONS = LRUCache(cache_size("TEXTXAI_EXPLANATION_CACHE", 4096))


def weights_digest(clf) -> str:
    """A digest of the model's current weights: the bytes of every parameter and buffer
    (:func:`textxai.classifier.content_digest`; per-tensor sums missed two head rows swapped).

    The fingerprint names a model; this tells its versions apart, so a model being trained (e.g. under
    ``TextxaiCallback``) never gets what was computed with its earlier weights.
    """
    import hashlib
    import json

    from textxai.classifier import content_digest

    return hashlib.sha256(json.dumps([clf.fingerprint, content_digest(clf.model)]).encode()).hexdigest()[:16]


def _precision(clf, method: str, options: dict) -> str:
    """The resolved precision of a perturbation method's passes: as asked, else float32 for omission (the model's
    exact drops) and "auto" for the sampling methods."""
    return clf.resolve_precision(options.get("precision", "float32" if method == "omission" else "auto"))


def _settings(clf, method: str, seed: int, options: dict) -> tuple:
    perturbation = options.get("perturbation", "mask")
    digest = (weights_digest(clf), clf.word_view_key)  # the words of a text depend on the word view too
    if method == "omission":
        return (digest, method, perturbation, _precision(clf, method, options))
    samples = options.get("n_samples", REGISTRY[method].default_samples)
    if samples == "auto":
        samples = ("auto", options.get("top_k", 5))
    precision = _precision(clf, method, options)
    width = options.get("kernel_width", 0.25) if method == "lime" else None
    return (digest, method, perturbation, samples, precision, width, seed)


def _remembered(clf, texts, pairs, targets, settings: tuple, compute) -> list[np.ndarray]:
    """Each text's remembered scores under ``settings``; ``compute(indices)`` explains the others (one call)."""
    keys = [(settings, text, None if pairs is None else pairs[i], int(targets[i])) for i, text in enumerate(texts)]
    out = [_EXPLANATIONS.get(key) for key in keys]
    todo = [i for i, got in enumerate(out) if got is None]
    if todo:
        for i, scores in zip(todo, compute(np.asarray(todo, dtype=np.int64))):
            _EXPLANATIONS.put(keys[i], scores.copy() if isinstance(scores, SamplingExplanation) else np.array(scores, copy=True))
            out[i] = scores
    return [scores.copy() if isinstance(scores, SamplingExplanation) else np.array(scores, copy=True) for scores in out]


def _attributions(clf, texts, pairs, probs, targets, method: str, seed: int, batch_size: int, progress: bool,
                  options: dict) -> list[np.ndarray]:
    if not texts:
        return []
    if method in GRADIENT_METHODS:
        kwargs = {"n_steps": check_positive_int(options.get("n_steps", REGISTRY[method].default_samples), "n_steps")} if method == "integrated_gradients" else {}
        return _gradient_attributions(clf, texts, pairs, targets, method, batch_size, progress, **kwargs)
    perturbation = options.get("perturbation", "mask")
    if method == "omission":
        return _omission(clf, texts, pairs, probs, targets, batch_size, perturbation, progress,
                         _precision(clf, method, options))
    n_samples = options.get("n_samples", REGISTRY[method].default_samples)
    precision = _precision(clf, method, options)
    sampling = SamplingOptions(method, 0 if n_samples == "auto" else n_samples, seed, perturbation,
                               options.get("kernel_width", 0.25), precision)
    if n_samples == "auto":
        return _adaptive_sampling(clf, texts, pairs, targets, sampling, batch_size, progress, options.get("top_k", 5))
    return [SamplingExplanation(scores, n_samples, inputs) for scores, inputs in
            _sampling_attributions(clf, texts, pairs, targets, sampling, batch_size, progress)]
