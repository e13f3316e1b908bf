"""Does the probability judge measure anything? Originals vs corrupted copies (issue 40, part 2).

Texts: CEval's human counterfactuals of IMDb reviews (``test_contrast.tsv`` of the expert and the crowd sets, read
from ``../shared/reference/ceval`` or ``$TEXTXAI_REFERENCE_DIR/ceval``, never copied), ``--n`` of each, drawn under
``--seed`` among those of at most ``--max-words`` words. Each gets four corrupted copies (:func:`corruptions`): its
words shuffled, every third word deleted, one sentence repeated, characters swapped (two neighbouring inner letters
of every fourth word of 4+ letters). The judge (default the packaged SmolLM2-135M-Instruct) reads CEval's four
questions from its next-token probabilities (:func:`textxai.ceval.judge.judge_quality`).

Reported: per aspect and corruption, the AUC of the judge's expected score separating originals from corrupted
copies (P(score(original) > score(copy)), ties 1/2; 0.5 = cannot tell, 1 = always prefers the original) with a 95 %
bootstrap percentile interval resampling the originals (each with its copies), 2,000 resamples; the Spearman
correlation between aspects over all scored texts; the entropy of the score distribution; and, on ``--compare``
texts, the cost of the probability path against generate-and-parse (forward passes, generated tokens, contended
seconds, parsed replies).

    TEXTXAI_REFERENCE_DIR=../shared/reference nice -n 10 python bench/bench_judge_auc.py --n 30 --out judge_auc.json
"""
from __future__ import annotations

import argparse
import csv
import json
import random
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

CORRUPTIONS = ("shuffled", "third_deleted", "sentence_repeated", "chars_swapped")


def human_counterfactuals(folder: Path, n: int, max_words: int, seed: int) -> list[tuple[str, str]]:
    """``n`` (set, text) of each of CEval's IMDb human counterfactual sets (expert, crowd), ``<br />`` as spaces."""
    out = []
    for which in ("expert", "crowd"):
        path = folder / "ceval" / "datasets" / "imdb" / which / "test_contrast.tsv"
        with path.open(newline="", encoding="utf-8") as f:
            texts = [" ".join(r["Text"].replace("<br />", " ").split()) for r in csv.DictReader(f, delimiter="\t")]
        texts = sorted({t for t in texts if 8 <= len(t.split()) <= max_words})
        out += [(which, t) for t in random.Random(seed).sample(texts, min(n, len(texts)))]
    return out


def corruptions(text: str, seed: int) -> dict[str, str]:
    """The four corrupted copies of ``text`` (seeded).

    >>> c = corruptions("One two three four five six. Seven eight nine.", 0)
    >>> c["third_deleted"]
    'One two four five Seven eight'
    >>> c["sentence_repeated"].count("Seven eight nine.") + c["sentence_repeated"].count("One two three four five six.")
    3
    """
    rng = random.Random(seed)
    words = text.split()
    shuffled = words[:]
    rng.shuffle(shuffled)
    third = [w for i, w in enumerate(words) if i % 3 != 2]
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if s]
    k = rng.randrange(len(sentences))
    repeated = sentences[: k + 1] + [sentences[k]] + sentences[k + 1:]
    swapped = []
    for i, w in enumerate(words):
        if i % 4 == 1 and len(w) >= 4 and w[1:-1].isalpha():
            j = rng.randrange(1, len(w) - 2)
            w = w[:j] + w[j + 1] + w[j] + w[j + 2:]
        swapped.append(w)
    return {"shuffled": " ".join(shuffled), "third_deleted": " ".join(third),
            "sentence_repeated": " ".join(repeated), "chars_swapped": " ".join(swapped)}


def auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """P(pos > neg) + P(pos == neg) / 2 over all pairs."""
    diff = pos[:, None] - neg[None, :]
    return float((diff > 0).mean() + 0.5 * (diff == 0).mean())


def auc_interval(orig: np.ndarray, copies: np.ndarray, resamples: int = 2000, seed: int = 0) -> dict:
    """AUC of originals ``orig[n]`` vs copies ``copies[n]`` (or ``[n, m]``), bootstrap percentile 95 % over originals."""
    copies = copies.reshape(len(orig), -1)
    rng = np.random.default_rng(seed)
    value = auc(orig, copies.ravel())
    boot = []
    for _ in range(resamples):
        idx = rng.integers(0, len(orig), len(orig))
        boot.append(auc(orig[idx], copies[idx].ravel()))
    low, high = np.quantile(boot, [0.025, 0.975])
    return {"auc": value, "low": float(low), "high": float(high), "n_originals": int(len(orig))}


def main(argv=None):
    from real_texts import reference_dir

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=30, help="human counterfactuals of each set (expert, crowd)")
    parser.add_argument("--max-words", type=int, default=120)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--judge", default="textxai/smollm2-135m-instruct")
    parser.add_argument("--compare", type=int, default=6, help="texts on which both reading paths are timed (0: none)")
    parser.add_argument("--out", default="judge_auc.json")
    args = parser.parse_args(argv)

    from scipy.stats import spearmanr

    from textxai.ceval.judge import QUALITY_ASPECTS, judge_quality
    from textxai.lm import as_lm

    originals = human_counterfactuals(reference_dir(), args.n, args.max_words, args.seed)
    if not originals:
        raise SystemExit("CEval's reference data not found: set TEXTXAI_REFERENCE_DIR=../shared/reference")
    texts = [t for _, t in originals]
    copies = [corruptions(t, args.seed + i) for i, t in enumerate(texts)]
    flat = texts + [c[name] for name in CORRUPTIONS for c in copies]
    lm = as_lm(args.judge)
    start = time.perf_counter()
    read = judge_quality(flat, lm, batch_size=8)
    seconds = time.perf_counter() - start
    n = len(texts)
    results = {"n_originals": n, "sets": {s: sum(1 for w, _ in originals if w == s) for s in ("expert", "crowd")},
               "words_mean": float(np.mean([len(t.split()) for t in texts])), "forwards": len(flat) * 4,
               "seconds_contended": seconds, "auc": {}, "mean_score": {}, "entropy": {}, "spearman": {}}
    for aspect in QUALITY_ASPECTS:
        scores = np.asarray(read[aspect])
        orig = scores[:n]
        rows = {}
        for k, name in enumerate(CORRUPTIONS):
            rows[name] = auc_interval(orig, scores[n * (k + 1): n * (k + 2)])
        rows["all"] = auc_interval(orig, np.stack([scores[n * (k + 1): n * (k + 2)] for k in range(4)], axis=1))
        results["auc"][aspect] = rows
        results["mean_score"][aspect] = {"original": float(orig.mean()),
                                         **{name: float(scores[n * (k + 1): n * (k + 2)].mean())
                                            for k, name in enumerate(CORRUPTIONS)}}
        results["entropy"][aspect] = float(np.mean(read["entropy"][aspect]))
    for i, a in enumerate(QUALITY_ASPECTS):
        for b in QUALITY_ASPECTS[i + 1:]:
            results["spearman"][f"{a}/{b}"] = float(spearmanr(read[a], read[b])[0])
    if args.compare:
        few = texts[: args.compare]
        start = time.perf_counter()
        judge_quality(few, lm, batch_size=8)
        t_prob = time.perf_counter() - start
        start = time.perf_counter()
        gen = judge_quality(few, lm, batch_size=8, method="generate")
        t_gen = time.perf_counter() - start
        tokens = sum(len(lm.tokenizer(r, add_special_tokens=False)["input_ids"]) for a in QUALITY_ASPECTS
                     for r in gen["replies"][a])
        results["compare"] = {"texts": len(few), "judgements": 4 * len(few),
                              "probabilities": {"forwards": 4 * len(few), "generated_tokens": 0,
                                                "seconds_contended": t_prob, "unparsed": 0},
                              "generate": {"prefill_forwards": 4 * len(few), "generated_tokens": tokens,
                                           "decode_steps_bound": 4 * len(few) * 32, "seconds_contended": t_gen,
                                           "unparsed": gen["num_unparsed"]}}
    Path(args.out).write_text(json.dumps(results, indent=1))
    print(table(results))


def table(results: dict) -> str:
    from textxai.ceval.judge import QUALITY_ASPECTS

    head = "| aspect | " + " | ".join(CORRUPTIONS + ("all four",)) + " | mean entropy |"
    lines = [head, "|" + "---|" * (len(CORRUPTIONS) + 3)]
    for a in QUALITY_ASPECTS:
        cells = [f"{r['auc']:.2f} [{r['low']:.2f}, {r['high']:.2f}]" for r in
                 (results["auc"][a][c] for c in CORRUPTIONS + ("all",))]
        lines.append(f"| {a} | " + " | ".join(cells) + f" | {results['entropy'][a]:.2f} |")
    lines.append("")
    lines.append("Spearman between aspects: " + ", ".join(f"{k} {v:.2f}" for k, v in results["spearman"].items()))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
