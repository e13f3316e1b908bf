"""textxai.inconsistency: hand-worked chains, brute force, properties, errors."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from textxai import inconsistency as inc
from textxai.words import tokenize, tokenize_many
from helpers import edit_distance

# Five chains worked by hand (words are single letters, so spaCy and whitespace agree).
#   C1 ties:        d = [1, 1, 1]     inc = [0, 0]
#   C2 increasing:  d = [1, 2, 3]     inc = [1, 1]
#   C3 decreasing:  d = [3, 2, 1]     inc = [0, 0]
#   C4 failed step: d = [1, 3]        inc = [2]      (the editor failed at step 3)
#   C5 mixed:       d = [1, 2, 2, 5]  inc = [1, 0, 3]
C1 = ["a b c d", "a x c d", "a b c d", "a b c y"]
C2 = ["a b c d", "a x c d", "p q c d", "p q r s t"]
C3 = ["a b c d e f", "u v w d e f", "u q r d e f", "u q s d e f"]
C4 = ["a b", "a c", "x y z", None]
C5 = ["a", "b", "b c d", "b", "e f g h i"]
CHAINS = [C1, C2, C3, C4, C5]
LABELS = [[0, 1, 0, 1], [0, 1, 1, 0], [1, 0, 1, 0], [0, 1, 0, None], [0, 1, 0, 1, 1]]




def naive_step_values(chain, method="spacy"):
    texts = []
    for t in chain:  # the chain ends at its first failed step: None, "" or its input returned unchanged
        if not t or texts and " ".join(t.split()) == " ".join(texts[-1].split()):
            break
        texts.append(t)
    d = [edit_distance(tokenize(texts[i - 1], method), tokenize(texts[i], method)) for i in range(1, len(texts))]
    return d, [max(d[i + 1] - d[i], 0) for i in range(len(d) - 1)]


@pytest.mark.parametrize(
    "chain, d, steps",
    [(C1, [1, 1, 1], [0, 0]), (C2, [1, 2, 3], [1, 1]), (C3, [3, 2, 1], [0, 0]), (C4, [1, 3], [2]), (C5, [1, 2, 2, 5], [1, 0, 3])],
)
def test_hand_worked_steps(chain, d, steps):
    assert inc.step_distances(chain).tolist() == d
    assert inc.step_inconsistency(chain).tolist() == steps
    assert inc.step_distances(chain, "whitespace").tolist() == d


def test_hand_worked_pooled():
    r = inc.inc_at(CHAINS, n=[1, 2, 3, 5])
    # step 1: 0,1,0,2,1 ; steps <= 2 add 0,1,0,0 ; step 3 adds C5's 3
    assert r[1] == {"value": pytest.approx(4 / 5), "chains": 5, "steps": 5}
    assert r[2] == {"value": pytest.approx(5 / 9), "chains": 5, "steps": 9}
    assert r[3] == {"value": pytest.approx(8 / 10), "chains": 5, "steps": 10}
    assert r[5] == {"value": pytest.approx(8 / 10), "chains": 5, "steps": 10}


def test_hand_worked_per_chain():
    with pytest.warns(UserWarning, match="inc@5"):
        r = inc.inc_at(CHAINS, n=[1, 2, 3, 5], pooling="per_chain")
    assert r[1]["value"] == pytest.approx(4 / 5) and r[1]["chains"] == 5
    assert r[2]["value"] == pytest.approx((0 + 1 + 0 + 0.5) / 4) and r[2]["chains"] == 4
    assert r[3]["value"] == pytest.approx(4 / 3) and r[3]["chains"] == 1
    assert math.isnan(r[5]["value"]) and r[5]["chains"] == 0


def test_hand_worked_minimality_and_flip_rate():
    m = inc.minimality_at(CHAINS, n=[1, 2, 3, 4])
    assert [m[k]["value"] for k in (1, 2, 3, 4)] == pytest.approx([7 / 5, 10 / 5, 7 / 4, 5.0])
    assert [m[k]["chains"] for k in (1, 2, 3, 4)] == [5, 5, 4, 1]
    f = inc.flip_rate_at(LABELS, n=[1, 2, 3, 4])
    # step 3: C4 failed there (counts, not flipped); step 4: only C5 has x_4, and 1 -> 1 is no flip
    assert [f[k]["value"] for k in (1, 2, 3, 4)] == pytest.approx([1.0, 0.8, 0.8, 0.0])
    assert [f[k]["chains"] for k in (1, 2, 3, 4)] == [5, 5, 5, 1]


def test_inconsistency_flat_dict_matches_parts():
    r = inc.compute(CHAINS, n=[1, 2, 3], labels=LABELS, return_per_example=True)
    assert r["inc@2"] == pytest.approx(5 / 9) and r["inc@2_chains"] == 5 and r["inc@2_steps"] == 9
    assert r["minimality@3"] == pytest.approx(7 / 4) and r["minimality@3_chains"] == 4
    assert r["flip_rate@3"] == pytest.approx(0.8) and r["flip_rate@3_chains"] == 5
    assert r["per_example"]["minimality"] == [[1, 1, 1], [1, 2, 3], [3, 2, 1], [1, 3], [1, 2, 2, 5]]
    assert r["per_example"]["inc"] == [[0, 0], [1, 1], [0, 0], [2], [1, 0, 3]]
    assert r["per_example"]["inc@2"][:3] == [0.0, 1.0, 0.0] and math.isnan(r["per_example"]["inc@2"][3])
    pc = inc.compute(CHAINS, n=[2], pooling="per_chain")
    assert pc["inc@2"] == pytest.approx(0.375) and pc["inc@2_chains"] == 4


def test_labels_without_trailing_none_and_empty_string_failure():
    labels = [lab if lab[-1] is not None else lab[:-1] for lab in LABELS]
    chains = [c if c[-1] is not None else c[:3] + [""] for c in CHAINS]
    a = inc.compute(chains, n=[1, 2, 3], labels=labels)
    b = inc.compute(CHAINS, n=[1, 2, 3], labels=LABELS)
    assert a == b


def test_failed_first_step_contributes_only_to_flip_rate():
    r = inc.compute([["a b", None], ["a b", "a c", "a"]], n=[1], labels=[[0, None], [0, 1, 0]])
    assert r["inc@1"] == 0.0 and r["inc@1_chains"] == 1
    assert r["minimality@1_chains"] == 1
    assert r["flip_rate@1"] == 0.5 and r["flip_rate@1_chains"] == 2


def test_authors_inc9_covers_eight_steps():
    """inc@n needs x_{n+1}: a chain of 10 texts (9 edits) has inc at steps 1..8 only."""
    chain = ["a"] + [" ".join("w" * (i + 1) for _ in range(i + 1)) for i in range(9)]
    assert len(inc.step_inconsistency(chain)) == 8
    with pytest.warns(UserWarning):
        r = inc.inc_at([chain], n=[8, 9], pooling="per_chain")
    assert r[8]["chains"] == 1 and r[9]["chains"] == 0
    assert inc.inc_at([chain], n=[9])[9]["steps"] == 8


# ---------------------------------------------------------------------------------------------- properties

WORDS = st.sampled_from(["a", "b", "c", "d", "e", "good", "bad", "film"])
TEXT = st.lists(WORDS, min_size=1, max_size=8).map(" ".join)
CHAIN = st.lists(TEXT, min_size=2, max_size=7)


@settings(max_examples=60, deadline=None)
@given(st.lists(CHAIN, min_size=1, max_size=5), st.integers(1, 7))
def test_brute_force_both_poolings(chains, n):
    per = [naive_step_values(c) for c in chains]
    steps = [s for _, s in per]
    pooled = [v for s in steps for v in s[:n]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = inc.inc_at(chains, n=[n])[n]
        rp = inc.inc_at(chains, n=[n], pooling="per_chain")[n]
        m = inc.minimality_at(chains, n=[n])[n]
    assert r["steps"] == len(pooled)
    assert (math.isnan(r["value"]) and not pooled) or r["value"] == pytest.approx(np.mean(pooled))
    means = [np.mean(s[:n]) for s in steps if len(s) >= n]
    assert rp["chains"] == len(means)
    assert (math.isnan(rp["value"]) and not means) or rp["value"] == pytest.approx(np.mean(means))
    mins = [d[n - 1] for d, _ in per if len(d) >= n]
    assert m["chains"] == len(mins)
    assert (math.isnan(m["value"]) and not mins) or m["value"] == pytest.approx(np.mean(mins))


@settings(max_examples=60, deadline=None)
@given(CHAIN)
def test_inc_nonnegative_and_zero_when_distances_never_increase(chain):
    d = inc.step_distances(chain)
    steps = inc.step_inconsistency(chain)
    assert (steps >= 0).all()
    if np.all(np.diff(d) <= 0):
        assert (steps == 0).all()


@settings(max_examples=40, deadline=None)
@given(st.lists(WORDS, min_size=6, max_size=10), st.lists(st.integers(1, 6), min_size=1, max_size=6), st.randoms())
def test_non_increasing_substitutions_give_zero_inc(start, ks, rnd):
    """Substituting k_i >= 1 distinct positions by fresh words costs exactly k_i (k = 0 is a no-op: a failed step); non-increasing k_i => inc = 0."""
    ks = sorted((min(k, len(start)) for k in ks), reverse=True)
    chain, cur = [" ".join(start)], list(start)
    for step, k in enumerate(ks):
        cur = list(cur)
        for j, pos in enumerate(rnd.sample(range(len(cur)), k)):
            cur[pos] = f"fresh{step}x{j}"
        chain.append(" ".join(cur))
    assert inc.step_distances(chain).tolist() == ks
    assert inc.step_inconsistency(chain).tolist() == [0] * (len(ks) - 1)
    if len(ks) > 1:
        assert inc.inc_at([chain], n=[len(ks) - 1], pooling="per_chain")[len(ks) - 1]["value"] == 0.0


@settings(max_examples=40, deadline=None)
@given(CHAIN)
def test_per_chain_inc_of_full_chain_is_mean_of_steps(chain):
    d, steps = naive_step_values(chain)
    n = len(d) - 1  # the chain up to its first failed step (None, "" or an unchanged text)
    if n < 1:
        return
    assert inc.chain_inc_at(chain, n) == pytest.approx(np.mean(steps))
    r = inc.inc_at([chain], n=[n], pooling="per_chain")[n]
    assert r["value"] == pytest.approx(np.mean(steps)) and r["chains"] == 1
    assert inc.inc_at([chain], n=[n])[n]["value"] == pytest.approx(np.mean(steps))


# ---------------------------------------------------------------------------------------------- compare, plot


def test_compare_editors_is_welch_on_different_originals():
    a = [["a", "b", "b c d e"], ["a", "b", "c d e f"], ["a", "b", "b c d"], ["a", "b c", "d"]]
    b = [["a", "b", "c"], ["a", "b", "c"], ["a", "b c", "d e f"], ["a", "b", "c d"], ["q", "r", "s"]]
    va = np.array([2, 3, 1, 0], float)
    vb = np.array([0, 0, 1, 1, 0], float)
    se = math.sqrt(va.var(ddof=1) / 4 + vb.var(ddof=1) / 5)
    t = (va.mean() - vb.mean()) / se
    dof = se**4 / ((va.var(ddof=1) / 4) ** 2 / 3 + (vb.var(ddof=1) / 5) ** 2 / 4)
    from scipy import stats

    p = 2 * stats.t.sf(abs(t), dof)
    r = inc.compare_editors(a, b, [1])[1]
    assert r["test"] == "welch t" and r["statistic"] == pytest.approx(t) and r["p_value"] == pytest.approx(p)
    assert r["chains_a"] == 4 and r["chains_b"] == 5
    with pytest.warns(UserWarning, match="at least 2"):
        assert math.isnan(inc.compare_editors(a, b, [2])[2]["p_value"])
    with pytest.raises(ValueError, match="same originals"):
        inc.compare_editors(a, b, [1], paired=True)


def test_compare_editors_pairs_chains_from_the_same_originals():
    """Same originals: Wilcoxon signed-rank over the per-chain differences and a paired bootstrap interval."""
    from scipy import stats

    originals = [f"t{i}" for i in range(8)]
    inc_a = [2, 3, 1, 0, 2, 4, 1, 3]
    inc_b = [0, 1, 1, 0, 0, 1, 0, 2]

    def chain(x0, k):  # d = [1, 1 + k]: inc at step 1 is k
        return [x0, "w", " ".join(["v"] * (1 + k))]

    a = [chain(x, k) for x, k in zip(originals, inc_a)]
    b = [chain(x, k) for x, k in zip(originals, inc_b)]
    r = inc.compare_editors(a, b, [1], n_resamples=999)[1]
    diff = np.array(inc_a, float) - np.array(inc_b, float)
    ref = stats.wilcoxon(diff, zero_method="wilcox")
    assert r["test"] == "wilcoxon signed-rank" and r["p_value"] == pytest.approx(ref.pvalue)
    assert r["mean_a"] == pytest.approx(np.mean(inc_a)) and r["mean_b"] == pytest.approx(np.mean(inc_b))
    assert r["difference"] == pytest.approx(diff.mean()) and 0 < r["ci_low"] <= r["difference"] <= r["ci_high"]
    assert r["chains_a"] == r["chains_b"] == 8
    welch = inc.compare_editors(a, b, [1], paired=False)[1]
    assert welch["test"] == "welch t"
    assert welch["p_value"] == pytest.approx(stats.ttest_ind(inc_a, inc_b, equal_var=False).pvalue)


def test_plot_steps_boxes():
    fig = inc.plot_steps(CHAINS)
    ax_min, ax_inc = fig.axes
    # one box per step: 4 minimality steps, 3 inc steps (medians are the Line2D "medians")
    assert len([ln for ln in ax_min.lines if ln.get_xdata().size == 2]) >= 4
    assert ax_min.get_ylabel().startswith("minimality") and ax_inc.get_ylabel().startswith("inc")
    fig2 = inc.plot_steps({"A": CHAINS, "B": CHAINS[:2]})
    assert [t.get_text() for t in fig2.axes[0].get_legend().get_texts()] == ["A", "B"]


# ---------------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "chains, exc, match",
    [
        ([["only one"]], ValueError, r"chains\[0\]=\['only one'\] has 1 item"),
        ([["a", 3]], TypeError, r"chains\[0\]\[1\]=3 \(int\)"),
        ([["a", None, "b"]], ValueError, r"chains\[0\]\[2\]='b' follows"),
        ([[None, "b"]], ValueError, r"chains\[0\]\[0\]=None"),
        (["a b"], TypeError, r"chains\[0\]='a b'"),
        ([], ValueError, r"chains=\[\]"),
        ([["a", "b \udc80"]], ValueError, r"chains\[0\]\[1\]='b \\udc80' holds"),  # was a UnicodeEncodeError in spaCy
    ],
)
def test_bad_chains(chains, exc, match):
    with pytest.raises(exc, match=match):
        inc.compute(chains)


def test_bad_options():
    with pytest.raises(ValueError, match=r"labels\[0\] has 2 labels but chain 0 has 3 items"):
        inc.compute([["a", "b", "c"]], labels=[[0, 1]])
    with pytest.raises(ValueError, match="labels has 2 lists"):
        inc.compute([["a", "b", "c"]], labels=[[0, 1, 0], [1]])
    with pytest.raises(ValueError, match=r"n=\[0, 1\]: 0 is not a positive integer"):
        inc.compute([["a", "b"]], n=[0, 1])
    with pytest.raises(ValueError, match="word_tokenizer='nltk'"):
        inc.compute([["a", "b"]], word_tokenizer="nltk")
    with pytest.raises(ValueError, match="pooling='mean'"):
        inc.compute([["a", "b"]], pooling="mean")
    assert inc.check_n(np.array([3, 1])) == [3, 1]  # was refused as "not a non-empty list"
    with pytest.raises(ValueError, match=r"n=array\(\[0\]\): 0 is not a positive integer"):
        inc.check_n(np.array([0]))


def test_n_beyond_every_chain_is_nan_with_warning():
    with pytest.warns(UserWarning, match="no chain contributes"):
        r = inc.compute([["a", "b", "c d"]], n=[1, 50])
    assert math.isnan(r["inc@50"]) is False  # pooled: step 1 is available for @50
    assert r["inc@50_chains"] == 1
    assert math.isnan(r["minimality@50"]) and r["minimality@50_chains"] == 0
    with pytest.warns(UserWarning, match="no chain contributes"):
        r = inc.compute([["a", "b"]], n=[3])
    assert math.isnan(r["inc@3"]) and r["inc@3_chains"] == 0


PIECES = st.sampled_from(["don't", "U.S.", "a.m.", ":)", "(hi)", "e-mail", "http://x.org/a?b", "co-op", "it's", "5km",
                          "$3.50", "well...", "'quoted'", "--", "Mr.", "can't!", "A", "good", "rock'n'roll", "..."])
SEPARATORS = st.sampled_from([" ", "  ", "\n", "\t", " \n ", "\xa0", "\u2003"])


# texts where tokenizing whitespace pieces one by one differs from spaCy on the whole text (a special-case
# match across a space blocks another one): the fast path must notice and tokenize them whole
CROSS_SPACE = [
    "Mustn’t’ve(o: )::}ma’am Mightn’t’ve ",
    "( :]there'd'vewe’d ",
    "That’d’veLovin’ ’em:xthese'll>.>",
    ": (:C’monWhat’d these’d’ve",
    ") :}Nuthin' When’ve10pm ",
]


@pytest.mark.parametrize("text", CROSS_SPACE)
def test_fast_tokenization_is_exact_where_pieces_interact(text):
    assert tokenize_many([text], "spacy")[0] == tokenize(text)


def _emoticon_atoms():
    from textxai.words import _spacy_tokenizer

    return sorted(k for k in _spacy_tokenizer().rules if not k.isalpha() and not k.isspace())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.one_of(PIECES, st.sampled_from(_emoticon_atoms())), st.sampled_from([" ", "", "  "])),
                min_size=1, max_size=8))
def test_fast_tokenization_with_special_cases(parts):
    text = "".join(p + s for p, s in parts)
    assert tokenize_many([text], "spacy")[0] == tokenize(text)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(PIECES, SEPARATORS), min_size=1, max_size=12), SEPARATORS)
def test_piecewise_tokenization_equals_whole_text(parts, lead):
    """The distance fast path tokenizes each whitespace piece once; it must equal tokenizing the whole text."""
    text = lead + "".join(p + s for p, s in parts)
    assert tokenize_many([text], "spacy")[0] == tokenize(text)
    assert tokenize_many([text], "whitespace")[0] == tokenize(text, "whitespace")


class SpyClassifier:
    """A classifier (predict_proba) that counts its calls: validation must finish before the first one."""

    def __init__(self):
        self.calls = 0

    def predict_proba(self, texts, batch_size=32, progress=False):
        self.calls += 1
        return np.array([[0.0, 1.0] if "good" in t else [1.0, 0.0] for t in texts])


@pytest.mark.parametrize("bad, error", [
    (dict(lm=12345), (TypeError, ValueError)),
    (dict(lm="/no/such/lm/folder"), ValueError),
    (dict(return_per_example="yes"), TypeError),
    (dict(progress=None), TypeError),
    (dict(n=[0]), ValueError),
    (dict(pooling="mean"), ValueError),
    (dict(word_tokenizer="bpe"), ValueError),
    (dict(batch_size=0), ValueError),
    (dict(chains=[["good film", 3]]), TypeError),
])
def test_compute_rejects_bad_input_before_any_model_call(bad, error):
    spy = SpyClassifier()
    kwargs = dict(chains=[["good film", "bad film", "good film"]], model=spy, n=[1])
    kwargs.update(bad)
    with pytest.raises(error):
        inc.compute(**kwargs)
    assert spy.calls == 0
    assert inc.compute(chains=[["good film", "bad film", "good film"]], model=spy, n=[1])["flip_rate@1"] == 1.0
    assert spy.calls == 1


def test_compute_and_its_deprecated_former_name():
    chains = [["a b", "a c", "d e f"], ["x", "x y", "z"]]
    with pytest.warns(DeprecationWarning, match=r"inconsistency.inconsistency is deprecated: use textxai.inconsistency.compute"):
        assert inc.inconsistency(chains, n=[1, 2]) == inc.compute(chains, n=[1, 2])
    # word distances: chain 0 steps 1, 3 (inc 2); chain 1 steps 1, 2 (inc 1)
    assert inc.compute(chains, n=[1, 2], labels=[[0, 1, 0], [1, 1, 0]]) == {
        "inc@1": 1.5, "inc@1_chains": 2, "inc@1_steps": 2, "inc@2": 1.5, "inc@2_chains": 2, "inc@2_steps": 2,
        "minimality@1": 1.0, "minimality@1_chains": 2, "minimality@2": 2.5, "minimality@2_chains": 2,
        "flip_rate@1": 0.5, "flip_rate@1_chains": 2, "flip_rate@2": 1.0, "flip_rate@2_chains": 2,
    }


def test_a_step_returning_its_input_is_a_failed_step_never_a_perfect_one():
    """A no-op editor used to get the best possible score (inc@n = 0, minimality 0); now its chains end at step 1."""
    noop = [["the film was good", "the film was good", "the film was good"], ["bad", " bad ", "bad"]]
    with pytest.warns(UserWarning):
        r = inc.compute(noop, n=[1], labels=[[1, 1, 1], [0, 0, 0]], return_per_example=True)
    assert math.isnan(r["inc@1"]) and r["inc@1_chains"] == 0 and math.isnan(r["minimality@1"])
    assert r["flip_rate@1"] == 0.0 and r["flip_rate@1_chains"] == 2 and r["per_example"]["failed"] == [True, True]
    honest = inc.compute([["the film was good", "the film was bad", "the film was good"]], n=[1])
    assert honest["inc@1"] == 0.0 and honest["minimality@1"] == 1.0
    editor = lambda xs: [[x, x + " indeed"] if x.endswith("good") else [x] for x in xs]  # noqa: E731

    class Clf:
        def predict_proba(self, texts):
            return np.array([[0.0, 1.0] if "indeed" in t else [1.0, 0.0] for t in texts])

    fc = inc.feedback_chains(editor, ["so good", "so bad"], Clf(), steps=2, progress=False)
    assert fc.chains == [["so good", "so good indeed", None], ["so bad", None]]


def test_analyse_refuses_unclear_inputs_before_any_work():
    chains = [["a b", "a c", "d e f"]]
    with pytest.raises(ValueError, match="chains=None, texts=None: expected exactly one"):
        inc.analyse()
    with pytest.raises(ValueError, match="chains=given, texts=given"):
        inc.analyse(chains, texts=["a film"])
    with pytest.raises(ValueError, match="labels=given with texts"):
        inc.analyse(texts=["a film"], labels=[[0, 1]])
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'pooling_' \(did you mean 'pooling'\?\)"):
        inc.analyse(chains, pooling_="pooled")
    with pytest.raises(TypeError, match=r"texts\[0\]=1 \(int\): expected a string"):
        inc.analyse(texts=[1], classifier=object())
    a = inc.analyse(chains, n=[1], intervals=None, scoring=inc.ScoreOptions(pooling="per_chain"), figures=False)
    assert a.summary == inc.compute(chains, n=[1], pooling="per_chain") and a.figures == {}


def test_perplexity_at_n_leaves_out_texts_with_no_token_to_score(tiny_gpt2_parts):
    """Without a start token (bos=None) a one-token text has no token to score: its perplexity is NaN (textxai.lm).
    perplexity@1 was NaN with perplexity@1_chains = 2 (the NaN averaged in, the count saying both chains
    contributed); it is the other chain's perplexity over 1 chain, and NaN with a warning when no chain has one."""
    from textxai.lm import as_lm, perplexity

    lm = as_lm(tiny_gpt2_parts, bos=None)
    chains = [["the movie was good", "the"], ["a film", "a good film"]]
    r = inc.compute(chains, n=[1], lm=lm)
    assert r["perplexity@1"] == pytest.approx(float(perplexity(["a good film"], lm)[0]))
    assert r["perplexity@1_chains"] == 1
    with pytest.warns(UserWarning, match="no chain contributes to .*perplexity@1"):
        r = inc.compute(chains[:1], n=[1], lm=lm)
    assert math.isnan(r["perplexity@1"]) and r["perplexity@1_chains"] == 0


def test_a_blank_edit_is_a_failed_step_as_in_ceval():
    """An editor that answers with white space only: CEval counts such a generation as failed (is_failed), the LLM
    editor as "empty"; a chain took it as an edit deleting every word (minimality@1 = 4, and an inc@1 of 0 when
    the editor then "wrote" a text from nothing) and fed the blank text to the editor again."""
    with pytest.warns(UserWarning, match="no chain contributes"):
        r = inc.compute([["the film was good", "  \n"], ["a film", "a good film"]], n=[1], labels=[[1, 0], [0, 1]])
    assert r["minimality@1"] == 1.0 and r["minimality@1_chains"] == 1  # was (4 + 1) / 2 over 2 chains
    assert r["flip_rate@1"] == 0.5 and r["flip_rate@1_chains"] == 2    # the blank step: attempted, not flipped
    assert inc.check_chain(["a b", " ", None]) == ["a b"]
    with pytest.raises(ValueError, match=r"chain\[2\]='c' follows chain\[1\]=' '"):
        inc.check_chain(["a b", " ", "c"])
    editor = lambda xs: [["   ", x + " indeed"] if x == "so good" else ["\t"] for x in xs]  # noqa: E731

    class Clf:
        def predict_proba(self, texts):
            return np.array([[0.0, 1.0] if "good" in t else [1.0, 0.0] for t in texts])

    fc = inc.feedback_chains(editor, ["so good"], Clf(), steps=2, progress=False)
    assert fc.chains == [["so good", "so good indeed", None]]
    with pytest.raises(ValueError, match=r"texts\[1\]=' \\t': expected a non-empty text"):
        inc.feedback_chains(editor, ["so good", " \t"], Clf(), steps=2, progress=False)


def test_a_user_classifier_or_editor_with_numpy_outputs():
    """Any object with predict_proba is used as the classifier: NaN probabilities were read as label 0 by argmax
    (flip_rate@1 = 0.0, silently); an editor returning numpy.str_ candidates failed inside spaCy ("Argument
    'string' has incorrect type"), numpy arrays of candidates were refused as "not a list"."""
    flip = lambda x: x.replace("good", "bad") if "good" in x else x.replace("bad", "good")  # noqa: E731

    class Clf:
        def predict_proba(self, texts):
            return np.array([[0.0, 1.0] if "good" in t else [1.0, 0.0] for t in texts])

    class NaNClf:
        def predict_proba(self, texts):
            return np.full((len(texts), 2), np.nan)

    with pytest.raises(ValueError, match=r"model.predict_proba returned non-finite probabilities for 2 of 2 texts"):
        inc.compute([["so good", "so bad"]], n=[1], model=NaNClf())
    with pytest.raises(ValueError, match=r"model.predict_proba returned non-finite probabilities"):
        inc.feedback_chains(lambda xs: [[flip(x)] for x in xs], ["so good"], NaNClf(), steps=1, progress=False)
    expected = inc.feedback_chains(lambda xs: [[flip(x)] for x in xs], ["so good"], Clf(), steps=2, progress=False)
    for editor in (lambda xs: [[np.str_(flip(x))] for x in xs], lambda xs: [np.array([flip(x)]) for x in xs],
                   lambda xs: np.array([[flip(x)] for x in xs])):
        got = inc.feedback_chains(editor, ["so good"], Clf(), steps=2, progress=False)
        assert got == expected and all(type(t) is str for t in got.chains[0])
