"""The eigen core of the FIM difficulty: the top of the Fisher information spectrum of any differentiable function.

With ``p = softmax(f(x))`` and ``J = d log p / d x`` (``[C, D]``), the FIM is ``G = J^T diag(p) J`` (``[D, D]``,
Algorithm 1 of Datta et al.) and the difficulty is ``lambda_max(G)``.

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

from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from textxai.progress import progress_bar


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
        # in the input's dtype, at least float32 (a bfloat16 / float16 model's eigenvector is not rounded to it)
        vecs = v.reshape(x.shape).to(x.dtype if x.dtype in (torch.float32, torch.float64) else torch.float32)
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
