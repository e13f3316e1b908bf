"""The sampling explainers, LIME and Kernel SHAP: masks, kernels, the closed-form surrogate and the adaptive sample
count (``n_samples="auto"``); :mod:`textxai.attribution` holds the method registry and the gradient / omission
explainers, and re-exports every public name here (``from textxai.attribution import lime_samples`` keeps working).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from textxai.classifier import TextClassifier
from textxai.progress import progress_bar


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
# MIN_PAIRS (n + 1) pairs for n words: below that the pairs' covariance is too small, 3x at 1.2 pairs per coefficient
# on a 200-word review) where
#  (a) its top-k words are settled: 64 draws from the estimated sampling distribution of its scores (the small-sample
#      covariance of the surrogate over its pairs, :func:`_sandwich`) share >= STABLE_TOP_K of their top-k words with
#      it, on average; or
#  (b) its scores are as precise as the method's default count of independent samples (lime 5,000) makes them: the
#      estimated variance of its 2k highest scores over its pairs is at most the variance the same rows read as
#      independent samples give, scaled from n rows to the default count (n / default);
#  (c) its top-k words agree with a run at the default count as well as two such runs agree with each other: over
#      AGREEMENT_DRAWS draws of the true scores (its scores with their estimated variance) and of two default-count
#      runs around them (the independent-sample variance scaled to the default count), the mean top-k overlap of
#      its own top-k with a run is at least that of the two runs (the benchmark's criterion: ours vs lime >= lime's
#      seed to seed, estimated from the sample itself);
# or at the default count. LIME (n_samples="auto") draws its sizes by importance (:func:`lime_importance`, rows
# weighted p / q: the same estimand) and, from LIME_PRIOR_WORDS words on, shrinks its scores toward omission's drops
# (:func:`shrink_to_prior`, n more inputs): every rule then reads the shrunk scores and their posterior variance.
# bench/report.py measures it against the lime package (top-5 overlap with lime vs lime's own seed-to-seed overlap,
# model inputs).
ROUND_SAMPLES = 250
MIN_PAIRS = 2  # pairs per coefficient before any rule may stop a text
STABLE_TOP_K = 0.95
STABILITY_DRAWS = 64
AGREEMENT_DRAWS = 256


@dataclass
class SamplingExplanation:
    """One text's sampling explanation: ``scores`` per word, the ``samples`` (surrogate rows) it used and the model
    ``inputs`` they cost (distinct masks; fewer than the samples on short texts), and why it ``stopped``: "fixed"
    (n_samples given), "settled" (top-k stable), "precise" (as precise as the default count), "agrees" (its top-k as
    close to a default-count run as two such runs), "limit" (the default
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
    """The weighted ridge surrogate's scores, its inverse Gram, each row's term of its estimating equation and the
    covariance of the scores over the pairs (every pair: a mask and its complement, two rows).

    The pairs' covariance is Bell and McCaffrey's small-sample cluster estimator (CR2): each pair's residuals are
    scaled by ``(I - H_gg)^(-1/2)``, H_gg the pair's block of the surrogate's hat matrix, so the residuals the fit
    has absorbed are given back. On 10 reviews of 200 words (201 coefficients) it matched the spread of two
    independent halves of the sample within 0.93-1.10 from 1,000 rows on, where the plain sandwich with the
    n / (n - p) factor (HC1) was 1.0-1.4x too small (3x at 500 rows; docs/performance.md, LIME "auto")."""
    x = present.astype(float)
    total = weights.sum()
    xc = x - (weights @ x) / total
    yc = y - (weights @ y) / total
    inverse = np.linalg.pinv(xc.T @ (xc * weights[:, None]) + alpha * np.eye(x.shape[1]))
    beta = inverse @ (xc.T @ (weights * yc))
    residual = yc - xc @ beta
    rows = xc * (weights * residual)[:, None]  # each row's term of the surrogate's estimating equation
    counts = np.bincount(pair)
    odd = sorted({int(c) for c in counts[counts > 0]} - {2})
    if odd:
        raise ValueError(f"pair: every pair index must label exactly two rows (a mask and its complement); got "
                         f"indices labelling {odd} rows")
    order = np.argsort(pair, kind="stable")
    n_pairs = len(order) // 2
    xg = xc[order].reshape(n_pairs, 2, -1)
    root_w = np.sqrt(weights[order]).reshape(n_pairs, 2)
    hat = np.einsum("gap,pq,gbq->gab", xg, inverse, xg) * root_w[:, :, None] * root_w[:, None, :]
    values, vectors = np.linalg.eigh(np.eye(2) - hat)
    scale = np.einsum("gab,gb,gcb->gac", vectors, 1.0 / np.sqrt(np.clip(values, 1e-12, None)), vectors)
    adjusted = np.einsum("gab,gb->ga", scale, root_w * residual[order].reshape(n_pairs, 2))
    terms = np.einsum("gap,ga->gp", xg, root_w * adjusted)
    return beta, inverse, rows, inverse @ (terms.T @ terms) @ inverse


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
    beta, _, _, cov_pairs = _sandwich(present, y, weights, alpha, pair)
    return shrink_to_prior(beta, np.diag(cov_pairs), prior)[0]


def sampling_settled(present: np.ndarray, y: np.ndarray, weights: np.ndarray, alpha: float, pair: np.ndarray,
                     top_k: int, default_samples: int, rng: np.random.Generator,
                     ratio: np.ndarray | None = None, prior: np.ndarray | None = None) -> str | None:
    """Whether a paired sample suffices: "settled" (its top-k words stable, rule (a) above), "precise" (rule (b)),
    "agrees" (rule (c), :func:`agrees_as_default_runs`) or None. ``pair``: the pair index of every row; the surrogate is the weighted ridge of :func:`weighted_ridge`.
    ``ratio``: p / q of each row when the rows were drawn from q (importance weights, already in ``weights``): rule
    (b) then compares with the method's own independent samples (drawn from p), a row's term divided by sqrt(p / q).
    ``prior``: the scores are shrunk toward it (:func:`shrink_to_prior`); both rules read the shrunk scores and
    their posterior variances.

    On an exactly additive model there is no residual: the scores are known without error and a sample settles.
    """
    beta, inverse, rows, cov_pairs = _sandwich(present, y, weights, alpha, pair)
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
    cov_rows = inverse @ (rows.T @ rows) @ inverse  # HC0: 0.92-1.16x lime's own (docs/performance.md)
    default_variance = np.clip(np.diag(cov_rows), 0, None) * len(y) / default_samples
    if np.diag(cov_pairs)[best].sum() <= default_variance[best].sum():
        return "precise"
    if agrees_as_default_runs(beta, np.diag(cov_pairs), default_variance, k, rng):
        return "agrees"
    return None


def agrees_as_default_runs(scores: np.ndarray, variance: np.ndarray, default_variance: np.ndarray, k: int,
                           rng: np.random.Generator, draws: int | None = None) -> bool:
    """Rule (c): whether ``scores`` (with their ``variance``) share as many top-``k`` words with a run at the default
    count (``default_variance``) as two such runs share with each other, on average over draws of the true scores.

    >>> rng = np.random.default_rng(0); s = np.array([5.0, 4.0, 3.0, 0.0, 0.0, 0.0])
    >>> agrees_as_default_runs(s, np.zeros(6), np.full(6, 1.0), 3, rng)   # exact scores, noisy default runs
    True
    >>> agrees_as_default_runs(s, np.full(6, 4.0), np.full(6, 0.01), 3, rng)   # noisy scores, exact default runs
    False
    """
    draws = draws or AGREEMENT_DRAWS
    z = rng.standard_normal((3, draws, len(scores)))
    truth = scores + z[0] * np.sqrt(np.clip(variance, 0, None))
    runs = truth[None] + z[1:] * np.sqrt(default_variance)
    tops = np.argsort(-runs, axis=2, kind="stable")[:, :, :k]
    own = np.argsort(-scores, kind="stable")[:k]
    ours = np.mean([np.isin(tops[0, d], own).sum() for d in range(draws)])
    theirs = np.mean([np.isin(tops[0, d], tops[1, d]).sum() for d in range(draws)])
    return bool(ours >= theirs)


LIME_PRIOR_WORDS = 3  # LIME n_samples="auto" on texts of at least this many words: scores shrunk toward omission's


def _uses_prior(options: SamplingOptions, n_words: int) -> bool:
    """Whether n_samples="auto" shrinks this text's scores toward omission's drops (LIME, >= LIME_PRIOR_WORDS words)."""
    return options.method == "lime" and n_words >= LIME_PRIOR_WORDS


def _adaptive_sampling(clf: TextClassifier, texts, pairs, targets, options: SamplingOptions, batch_size: int,
                       progress: bool, top_k: int, limit: int) -> list[SamplingExplanation]:
    """n_samples="auto": rounds of paired masks for every text not yet settled, all of a round's new masks through
    the model together; each text's scores from all of its rows (see the comment above); at most ``limit`` samples
    (the method's default count)."""
    encodings = clf.word_encodings(texts, pairs)
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
            elif len(present) < MIN_PAIRS * (encodings[i].n_words + 1) * 2 and len(s["known"]) < 1 << min(
                    encodings[i].n_words, 62):
                stopped = None  # the pairs' covariance needs MIN_PAIRS p pairs (unless every mask is known)
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
