"""NAOPC exact limits against the authors' stored outputs (../shared/reference/naopc, all 12 files).

For every example the stored model outputs of EVERY subset of its words give a model-free score_fn.
Our exact DP must reproduce the stored lower and upper limits (1e-6), except where the authors'
enumeration is defective (its running maximum starts at 0.0, so orderings whose partial sums go
negative are never credited and the stored upper limit is too high — not even the AOPC of the stored
upper order). There our upper limit must equal a brute force over all N! orderings, sit below the
stored value, and be at least the AOPC of the stored order.
"""
from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from textxai import naopc as N

FILES = [
    f"{ds}_{model}"
    for ds in ("sst2", "yelp")
    for model in (
        "bert-base-uncased-SST-2",
        "bert-base-uncased-imdb",
        "bert-base-uncased-yelp-polarity",
        "roberta-base-SST-2",
        "roberta-base-finetuned-yelp-polarity",
        "roberta-base-imdb",
    )
]


def load_examples(reference_dir, name):
    pd = pytest.importorskip("pandas")
    outputs = pd.read_parquet(reference_dir / "naopc" / "results" / "permutation_outputs" / f"{name}.parquet")
    limits = pd.read_parquet(reference_dir / "naopc" / "results" / "aopc_limits_exact" / f"{name}.parquet")
    examples = {}
    for eid, group in outputs.groupby("id"):
        keys = [sum(1 << (i - 1) for i in json.loads(s)) for s in group["word_key"]]
        n = int(round(math.log2(len(keys))))
        logits = np.stack([group["negative_logit"].to_numpy(), group["positive_logit"].to_numpy()], axis=1)
        z = np.exp(logits - logits.max(axis=1, keepdims=True))
        p = z[:, 1] / z.sum(axis=1)
        table = np.full(1 << n, np.nan)
        table[keys] = p
        assert not np.isnan(table).any(), f"{name} id {eid}: not every subset stored"
        examples[int(eid)] = table
    return examples, limits.set_index("id")


def brute_force_upper(table):
    """max over all N! orderings of the AOPC, from the definition (one first word at a time, for memory)."""
    n = int(round(math.log2(len(table))))
    rest_perms = np.array(list(itertools.permutations(range(n - 1))), dtype=np.int64).reshape(-1, n - 1)
    best = -math.inf
    for first in range(n):
        others = np.array([j for j in range(n) if j != first], dtype=np.int64)
        perms = np.concatenate([np.full((len(rest_perms), 1), first), others[rest_perms]], axis=1)
        keys = np.cumsum(1 << perms, axis=1)  # prefix sets as bitmasks (distinct bits, so sum == OR)
        best = max(best, float(((table[0] - table[keys]).sum(axis=1) / n).max()))
    return best


def score_fn(table):
    weights = 1 << np.arange(int(round(math.log2(len(table)))))
    return lambda masks: table[np.asarray(masks, dtype=np.int64) @ weights]


@pytest.mark.parametrize("name", FILES)
def test_exact_limits_match_the_authors(reference_dir, name):
    examples, stored = load_examples(reference_dir, name)
    assert set(examples) == set(stored.index)
    n_defect = 0
    for eid, table in examples.items():
        row = stored.loc[eid]
        n = int(round(math.log2(len(table))))
        assert n == row["number_of_elements"]
        lim = N.aopc_limits(score_fn(table), n, method="exact")
        assert lim.n_evaluations == 1 << n
        # their p(x) and p(all masked) columns are ours
        assert table[0] == pytest.approx(row["prob"], abs=1e-9)
        assert table[-1] == pytest.approx(row["masked_input"], abs=1e-9)
        # lower limits: every one reproduced
        assert lim.lower == pytest.approx(row["lower_limit"], abs=1e-6), (name, eid)
        stored_upper_order = [int(i) - 1 for i in row["upper_limit_order"]]
        if abs(lim.upper - row["upper_limit"]) <= 1e-6:
            continue
        # the defect: stored upper too high and not reached by its own order; ours is the true maximum
        n_defect += 1
        assert lim.upper < row["upper_limit"], (name, eid)
        assert N.aopc(score_fn(table), stored_upper_order) <= lim.upper + 1e-12
        assert lim.upper == pytest.approx(brute_force_upper(table), abs=1e-12), (name, eid)
        # ... and some partial sum of the best ordering is negative (what a running max from 0 never credits)
        assert np.cumsum(lim.upper_curve).min() < 0
    # the README's examples of the defect are among ours
    known = {"sst2_bert-base-uncased-SST-2": 1, "sst2_roberta-base-imdb": 3}
    if name in known:
        assert n_defect == known[name]


@pytest.mark.parametrize("name", ["sst2_bert-base-uncased-SST-2", "yelp_roberta-base-imdb"])
def test_beam_on_oracle(reference_dir, name):
    examples, _ = load_examples(reference_dir, name)
    gaps = []
    for eid, table in examples.items():
        n = int(round(math.log2(len(table))))
        exact = N.aopc_limits(score_fn(table), n, method="exact")
        beam = N.aopc_limits(score_fn(table), n, method="beam-paper", beam_size=5)
        wide = N.aopc_limits(score_fn(table), n, method="beam-paper", beam_size=math.comb(n, n // 2))
        assert beam.lower >= exact.lower - 1e-12 and beam.upper <= exact.upper + 1e-12
        assert (wide.lower, wide.upper) == pytest.approx((exact.lower, exact.upper), abs=1e-12)
        assert beam.n_evaluations <= min(1 << n, 1 + 5 * n * (n + 1))
        gaps.append((exact.upper - beam.upper, beam.lower - exact.lower))
    gaps = np.array(gaps)
    # beam 5 is close to exact on these short inputs (the mean gaps are reported in the card)
    assert gaps.mean() < 0.01
