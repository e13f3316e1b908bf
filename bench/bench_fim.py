"""Benchmark of textxai.fim: lambda_max via the C x C matrix vs explicit G + numpy eigvalsh; throughput.

    .venv/bin/python bench/bench_fim.py [--sizes 8 16 32] [--throughput 64 256] [--n 32]

Prints, on the demo sentiment model (MiniLM encoder, d = 384, C = 2):
- per example: the naive path (C backward passes for J, G = J^T diag(p) J formed, numpy eigvalsh) against
  ours (batched, C x C matrix), with the wall-time ratio and the relative difference of lambda_max;
- examples per second at 64 and 256 tokens, and our cost in units of one batched forward+backward pass.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from baselines import demo_classifier  # noqa: E402




def texts_of_length(clf, n_tokens: int, count: int) -> list[str]:
    """Texts of exactly n_tokens tokens (special tokens included), different word choices per text."""
    words = ["film", "good", "bad", "plot", "actor", "boring", "great", "story", "music", "scene"]
    out = []
    for i in range(count):
        rng = np.random.default_rng(i)
        text = " ".join(rng.choice(words, size=n_tokens - 2))
        assert len(clf.word_encoding(text).input_ids) == n_tokens
        out.append(text)
    return out


def naive_lambda(clf, text: str) -> float:
    enc = clf.encode([text])
    e = clf.input_embeddings(enc.tensors).detach().requires_grad_(True)
    logp = torch.log_softmax(clf.logits_from_embeddings(e, enc.tensors).double(), 1)[0]
    C = logp.shape[0]
    J = np.stack([torch.autograd.grad(logp[c], e, retain_graph=c < C - 1)[0].reshape(-1).double().numpy() for c in range(C)])
    p = logp.exp().detach().numpy()
    G = J.T @ (p[:, None] * J)
    return float(np.linalg.eigvalsh(G)[-1])


def report_row(clf, n_tokens: int = 16, n_texts: int = 1):
    """One row of bench/report.py: lambda_max per example, ours vs explicit G + eigvalsh (one torch thread, as main)."""
    from rows import Row

    from textxai import fim

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        texts = texts_of_length(clf, n_tokens, n_texts)
        fim.difficulty(texts[:1], clf)  # warm-up
        start = time.perf_counter()
        ours_vals = fim.difficulty(texts, clf, batch_size=len(texts))["difficulty"]
        ours = (time.perf_counter() - start) / len(texts)
        start = time.perf_counter()
        ref = [naive_lambda(clf, x) for x in texts]
        naive = (time.perf_counter() - start) / len(texts)
    finally:
        torch.set_num_threads(threads)
    rel = float(np.max(np.abs(np.asarray(ours_vals) - ref) / np.abs(ref)))
    return Row(f"FIM lambda_max, {n_texts} texts x {n_tokens} tokens (D = {n_tokens * clf.embedding_matrix.shape[1]:,})",
               "explicit G + numpy eigvalsh (s/example)", f"{naive:.3f}", f"{ours:.4f} (rel. diff {rel:.0e})",
               f"{naive / ours:,.0f}x faster")


def main(argv=None):
    from textxai import fim

    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=[8, 16, 32])
    parser.add_argument("--throughput", type=int, nargs="*", default=[64, 256])
    parser.add_argument("--n", type=int, default=32, help="texts per throughput measurement")
    parser.add_argument("--naive-n", type=int, default=2, help="texts timed on the naive path per size")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (default 1: on a shared, oversubscribed machine 2-thread regions stall)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    clf = demo_classifier()
    d = clf.embedding_matrix.shape[1]
    print(f"model {clf.name}, d = {d}, C = {clf.num_labels}, torch threads {torch.get_num_threads()}")
    timed = {}
    for L in args.sizes:  # every fast-path timing first: numpy's BLAS threads spin after a big eigvalsh
        texts = texts_of_length(clf, L, args.naive_n)
        fim.difficulty(texts[:1], clf)  # warm-up
        times = []  # best of 5: the machine may be shared
        for _ in range(5):
            t = time.perf_counter()
            vals = fim.difficulty(texts, clf, batch_size=len(texts))["difficulty"]
            times.append(time.perf_counter() - t)
        timed[L] = (texts, vals, min(times) / len(texts))
    print(f"{'tokens':>6} {'examples/s':>11} {'fwd+bwd s/ex':>13} {'cost in fwd+bwd':>16}")
    for L in args.throughput:
        texts = texts_of_length(clf, L, args.n)
        fim.difficulty(texts[:2], clf, batch_size=2)
        t = time.perf_counter()
        fim.difficulty(texts, clf, batch_size=16)
        ours = time.perf_counter() - t
        # one forward + one backward pass of the same batches (the unit of cost)
        t = time.perf_counter()
        for start in range(0, len(texts), 16):
            enc = clf.encode(texts[start:start + 16])
            e = clf.input_embeddings(enc.tensors).detach().requires_grad_(True)
            clf.logits_from_embeddings(e, enc.tensors).sum().backward()
        fb = time.perf_counter() - t
        print(f"{L:>6} {len(texts) / ours:>11.2f} {fb / len(texts):>13.4f} {ours / fb:>15.2f}x  (bound C+1 = {clf.num_labels + 1})")

    print()
    print(f"{'tokens':>6} {'D':>6} {'naive s/ex':>11} {'ours s/ex':>10} {'ratio':>8} {'rel diff':>9}")
    for L in args.sizes:
        texts, ours_vals, ours = timed[L]
        t = time.perf_counter()
        ref = [naive_lambda(clf, x) for x in texts]
        naive = (time.perf_counter() - t) / len(texts)
        rel = float(np.max(np.abs(ours_vals - ref) / np.abs(ref)))
        print(f"{L:>6} {L * d:>6} {naive:>11.4f} {ours:>10.4f} {naive / ours:>7.0f}x {rel:>9.1e}")



if __name__ == "__main__":
    main()
