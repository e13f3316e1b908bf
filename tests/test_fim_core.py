"""The FIM core on plain tensors: explicit G + eigvalsh, closed forms, invariances, paper §4.1."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import spearmanr

from textxai.fim import fisher_eigen, tensor_difficulty


def _mlp(L, d, C, seed, hidden=7):
    g = torch.Generator().manual_seed(seed)
    W1 = torch.randn(L * d, hidden, generator=g, dtype=torch.float64)
    W2 = torch.randn(hidden, C, generator=g, dtype=torch.float64) * 1.5
    b = torch.randn(C, generator=g, dtype=torch.float64)

    def fn(x):
        return torch.tanh(x.reshape(x.shape[0], -1) @ W1) @ W2 + b

    return fn


def _explicit_G(fn, x1):
    """G = J^T diag(p) J formed explicitly for one example x1 (shape [L, d])."""
    def logp(flat):
        return torch.log_softmax(fn(flat.reshape(1, *x1.shape)), dim=1)[0]

    flat = x1.reshape(-1).clone()
    J = torch.autograd.functional.jacobian(logp, flat).numpy()  # [C, D]
    p = torch.softmax(fn(x1.unsqueeze(0)), 1)[0].detach().numpy()
    return J.T @ np.diag(p) @ J


@pytest.mark.parametrize("C", [2, 3, 5])
def test_lambda_max_matches_explicit_fim(C):
    L, d = 4, 3
    fn = _mlp(L, d, C, seed=C)
    x = torch.randn(6, L, d, generator=torch.Generator().manual_seed(10 + C), dtype=torch.float64)
    res = fisher_eigen(fn, x, return_eigenvector=True)
    for i in range(x.shape[0]):
        G = _explicit_G(fn, x[i])
        w, V = np.linalg.eigh(G)
        assert res.eigenvalues[i].item() == pytest.approx(w[-1], rel=1e-5, abs=1e-12)
        # the whole nonzero spectrum (the C eigenvalues of M) matches the top of G's spectrum
        np.testing.assert_allclose(res.all_eigenvalues[i].numpy(), w[::-1][:C], rtol=1e-5, atol=1e-10)
        # eigenvector: unit norm, G v = lambda v, same line as eigvalsh's
        v = res.eigenvectors[i].reshape(-1).numpy()
        assert np.linalg.norm(v) == pytest.approx(1.0, abs=1e-10)
        np.testing.assert_allclose(G @ v, w[-1] * v, atol=1e-8 * max(1.0, w[-1]))
        assert abs(abs(v @ V[:, -1]) - 1.0) < 1e-6


def test_linear_in_mean_embedding_closed_form():
    # logits = W mean_l(x_l) + b  =>  G = (1/L^2) 11^T (x) W^T (diag p - p p^T) W, lambda_max = lambda_max(F)/L
    g = torch.Generator().manual_seed(0)
    for C, L, d in [(2, 5, 3), (3, 4, 6), (5, 7, 2)]:
        W = torch.randn(C, d, generator=g, dtype=torch.float64)
        b = torch.randn(C, generator=g, dtype=torch.float64)
        x = torch.randn(5, L, d, generator=g, dtype=torch.float64)
        fn = lambda x: x.mean(1) @ W.T + b  # noqa: E731
        res = fisher_eigen(fn, x, return_eigenvector=True)
        for i in range(x.shape[0]):
            p = torch.softmax(x[i].mean(0) @ W.T + b, 0).numpy()
            F = W.numpy().T @ (np.diag(p) - np.outer(p, p)) @ W.numpy()
            wF, VF = np.linalg.eigh(F)
            assert res.eigenvalues[i].item() == pytest.approx(wF[-1] / L, rel=1e-10)
            # eigenvector: the same d-vector at every position, 1/sqrt(L) each
            v = res.eigenvectors[i].numpy()
            np.testing.assert_allclose(np.abs(v), np.abs(np.tile(VF[:, -1], (L, 1))) / np.sqrt(L), atol=1e-8)
        if C == 2:  # scalar closed form p1 p2 ||w1 - w2||^2 / L
            p = torch.softmax(x.mean(1) @ W.T + b, 1)
            expect = p[:, 0] * p[:, 1] * (W[0] - W[1]).pow(2).sum() / L
            torch.testing.assert_close(res.eigenvalues, expect, rtol=1e-10, atol=0)


@settings(max_examples=25, deadline=None)
@given(C=st.integers(2, 5), shift=st.floats(-50, 50), seed=st.integers(0, 10_000))
def test_invariances(C, shift, seed):
    L, d = 3, 2
    fn = _mlp(L, d, C, seed)
    x = torch.randn(5, L, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    r = fisher_eigen(fn, x)
    assert (r.eigenvalues >= 0).all()
    # adding the same constant to every logit changes nothing
    r2 = fisher_eigen(lambda x: fn(x) + shift, x)
    torch.testing.assert_close(r2.eigenvalues, r.eigenvalues, rtol=1e-9, atol=1e-12)
    # rank <= C - 1: the smallest eigenvalue of M is 0 (for C = 2 the second one)
    assert r.all_eigenvalues[:, -1].abs().max().item() <= 1e-10 * max(1.0, r.eigenvalues.max().item())


def test_two_classes_second_eigenvalue_zero_and_batch_size_independence():
    fn = _mlp(4, 3, 2, seed=3)
    x = torch.randn(16, 4, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    a = tensor_difficulty(fn, x, batch_size=1, return_all_eigenvalues=True, return_eigenvector=True)
    b = tensor_difficulty(fn, x, batch_size=16, return_all_eigenvalues=True, return_eigenvector=True)
    np.testing.assert_allclose(a["difficulty"], b["difficulty"], rtol=1e-12)
    np.testing.assert_allclose(a["eigenvectors"], b["eigenvectors"], atol=1e-12)
    assert np.all(np.abs(a["all_eigenvalues"][:, 1]) <= 1e-12)
    assert np.all(a["difficulty"] > 0)


def test_mask_drops_padding_positions():
    # a position masked out behaves as if it were absent from the input
    W = torch.randn(3, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    fn = lambda x: x.sum(1) @ W.T  # noqa: E731   padding rows are zeros, so sum is unchanged
    x = torch.randn(1, 3, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    padded = torch.cat([x, torch.zeros(1, 2, 2, dtype=torch.float64)], 1)
    mask = torch.tensor([[True, True, True, False, False]])
    full = fisher_eigen(fn, x, return_eigenvector=True)
    pad = fisher_eigen(fn, padded, mask=mask, return_eigenvector=True)
    torch.testing.assert_close(pad.eigenvalues, full.eigenvalues)
    torch.testing.assert_close(pad.eigenvectors[:, :3], full.eigenvectors)
    assert pad.eigenvectors[:, 3:].abs().max().item() == 0.0
    unmasked = fisher_eigen(fn, padded)
    assert unmasked.eigenvalues.item() > full.eigenvalues.item() * 1.2  # so the mask mattered


def test_eigenvector_sign_lowers_predicted_class():
    fn = _mlp(2, 3, 4, seed=5)
    x = torch.randn(8, 2, 3, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    r = fisher_eigen(fn, x, return_eigenvector=True)
    yhat = r.probs.argmax(1)
    eps = 1e-4
    p_plus = torch.softmax(fn(x + eps * r.eigenvectors), 1)
    assert (p_plus[torch.arange(8), yhat] <= r.probs[torch.arange(8), yhat] + 1e-12).all()


def test_bad_fn_output_and_inputs():
    x = torch.zeros(2, 3)
    with pytest.raises(ValueError, match="expected at least 2 classes"):
        fisher_eigen(lambda x: x[:, :1], x)
    with pytest.raises(ValueError, match=r"expected logits of shape \[batch, num_classes\]"):
        fisher_eigen(lambda x: x.sum(1), x)
    with pytest.raises(TypeError, match="x=list"):
        fisher_eigen(lambda x: x, [[1.0, 2.0]])
    with pytest.raises(ValueError, match="batch_size=0"):
        tensor_difficulty(lambda x: x, x, batch_size=0)


def test_synthetic_gaussians_lambda_peaks_at_decision_boundary():
    """Paper §4.1: two Gaussians, a 2-layer network; lambda_max is highest near the decision boundary."""
    rng = np.random.default_rng(0)
    n = 400
    a = rng.multivariate_normal([-2, -2], np.eye(2), n)
    b = rng.multivariate_normal([3.5, 3.5], [[2.0, 1.0], [1.0, 2.0]], n)
    X = torch.tensor(np.vstack([a, b]), dtype=torch.float32)
    y = torch.tensor([0] * n + [1] * n)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))
    opt = torch.optim.Adam(net.parameters(), lr=0.02)
    for _ in range(300):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(X), y)
        loss.backward()
        opt.step()
    net.eval()
    assert (net(X).argmax(1) == y).float().mean().item() > 0.97
    res = tensor_difficulty(net, X, batch_size=128)
    with torch.no_grad():
        z = net(X)
    margin = (z[:, 0] - z[:, 1]).abs().numpy()
    rho = spearmanr(res["difficulty"], margin).statistic
    assert rho <= -0.8, rho
    # and the hardest points are the ones closest to the boundary
    hardest = np.argsort(-res["difficulty"])[:20]
    assert np.median(margin[hardest]) < np.quantile(margin, 0.1)


def test_kl_along_eigenvector_is_half_lambda_eps_squared():
    """Second-order meaning of lambda_max: KL(p(x) || p(x + eps v)) ~ eps^2 lambda / 2, the maximum over directions."""
    fn = _mlp(3, 2, 3, seed=11)
    x = torch.randn(4, 3, 2, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    r = fisher_eigen(fn, x, return_eigenvector=True)
    eps = 1e-4

    def kl(direction):
        p = torch.log_softmax(fn(x), 1)
        q = torch.log_softmax(fn(x + eps * direction), 1)
        return (p.exp() * (p - q)).sum(1)

    torch.testing.assert_close(kl(r.eigenvectors) / eps**2, r.eigenvalues / 2, rtol=1e-3, atol=1e-12)
    for seed in range(5):
        d = torch.randn(x.shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
        d = d / d.reshape(4, -1).norm(dim=1).reshape(4, 1, 1)
        assert (kl(d) / eps**2 <= r.eigenvalues / 2 * (1 + 1e-3)).all()


@pytest.mark.parametrize("intervals, match", [({"confidence": 0.9}, "intervals has the key 'confidence'"),
                                              ("yes", "intervals='yes'"), ({"n_resamples": 0}, "n_resamples=0")])
def test_analyse_checks_the_interval_options_before_any_model_call(bert_clf, intervals, match, monkeypatch):
    from textxai import fim
    from textxai.classifier import TextClassifier

    monkeypatch.setattr(TextClassifier, "logits_from_embeddings", lambda *a, **k: pytest.fail("the model was called"))
    with pytest.raises((TypeError, ValueError), match=match):
        fim.analyse(["a good film"], bert_clf, intervals=intervals)
