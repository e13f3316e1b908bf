"""`make bench`: ONE table of textxai against the real peers, every figure measured in this run.

    .venv/bin/python bench/report.py [--quick] [--texts 20] [--markdown]

Workloads (demo sentiment model, CPU):

- NAOPC beam limits, word and token features: ours (``method="beam"``) vs the NAOPC authors' beam at B = 5
  (bench/authors_beam.py, their procedure as their code runs it). Model inputs are counted per method; the
  model itself sees each (text, set) once (a shared cache), so both sides are measured on the same values.
  Limits: mean and worst difference to theirs (positive = ours looser).
- NAOPC beam trade-off (N <= 14, word features): model inputs vs the gap to the exact limits, ours at
  B = 1, 2, 3 and the paper's beam at B = 1, 5.
- NAOPC exact path: model inputs per second of the exact limits vs a plain batched forward of the same
  token rows (the floor).
- NAOPC beam on the other sets of issue 26 (bench/naopc_sets.py): the authors' SST-2 / Yelp short texts on
  their stored BERT outputs (every subset stored: no model runs) and on the demo model, 40-80-word reviews.
- NAOPC ceilings (bench/naopc_sets.py --ceilings): on the authors' stored short texts, the fewest inputs any search
  reporting two orderings could ask, and the cheapest searches' ratios with the texts they leave > 0.01 looser.
- LIME on lime's terms at 1,000 and 5,000 samples vs the ``lime`` package (``LimeTextExplainer(bow=False,
  mask_string=" ")``: the same words, a removed word deleted, its cosine kernel of width 25; classifier_fn
  ``clf.predict_proba(xs, batch_size=B)``, B the fastest of 32-512 rows measured at the start of the run) and
  ours with ``perturbation="delete"`` (the same kernel), on short held-out texts and on long real reviews.
  Ours as a user runs it (precision "auto": bfloat16 forward passes on a CPU with AVX512-BF16) and with
  ``precision="float32"``; the top-5 overlap of ours with lime next to lime's own seed-to-seed overlap.
- Kernel SHAP at equal samples vs captum's ``KernelShap`` on the same forward (precision "auto").
- TOKI keyword identification with LIME 5,000 samples (bench_toki.py): seconds per instance, next to the
  paper's 94-97 s per instance (GPU).
- FIM lambda_max (bench_fim.py), CEval token distance (bench_ceval.py; needs ../shared/reference), inconsistency
  inc@n (bench_inconsistency.py): ours vs the naive / authors' way, one row each (the scripts print more alone).
- The packaged LM (bench_lm.py): perplexity against a plain batched forward of the same tokens (ratio), greedy
  generation new tokens/s with the KV cache, next to the forward limit and to generation without the cache.
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import platform
import signal
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from baselines import demo_classifier  # noqa: E402
from naopc_problems import CachedScores, beam_problems, texts_of_lengths, tradeoff, versus_authors  # noqa: E402
from rows import Row  # noqa: E402


# ------------------------------------------------------------------------------------------ NAOPC
def naopc_beam_rows(clf, n_texts: int) -> list[Row]:
    rows = []
    for features in ("words", "tokens"):
        (v,) = versus_authors(list(beam_problems(clf, n_texts, features)), ["beam"])
        per_input = v.seconds / max(v.inputs, 1)
        looser = int(((v.d_up > 0.01) | (v.d_lo > 0.01)).sum())
        rows.append(Row(
            f"NAOPC beam limits, {len(v.ns)} texts, {features} N={min(v.ns)}-{max(v.ns)}",
            "authors' beam B=5 (model inputs)",
            f"{v.theirs:,} (~{v.theirs * per_input:.0f} s)",
            f"{v.inputs:,} ({v.seconds:.0f} s); limits vs theirs: upper {v.d_up.mean():+.4f} mean / {v.d_up.max():+.4f} "
            f"worst, lower {v.d_lo.mean():+.4f} / {v.d_lo.max():+.4f} (+ = ours looser; {looser} texts > 0.01)",
            f"{v.theirs / v.inputs:.2f}x fewer"))
    return rows


LONG_FEATURES = ("words",)  # the reviews' token features (~2 h of the authors' beam): bench/naopc_sets.py --sets long


def naopc_set_rows(clf, sets: list[str], count: int | None = None, store_file: Path | None = None) -> list[Row]:
    """Our beam vs the authors' B = 5 on the other text sets of issue 26 (bench/naopc_sets.py): the authors' own
    SST-2 / Yelp texts (on their stored BERT outputs, and on the demo model), 40-80- and 100-200-word reviews.

    ``store_file`` (a pickle) keeps the demo model's outputs of every (text, set) asked between runs: both searches
    are counted on the same outputs whether they come from the model or the file (the counts are the searches'
    own), and the authors' beam on the long reviews (~2 h of model time) runs in minutes the second time."""
    from naopc_sets import FEATURES, compare

    store = pickle.loads(store_file.read_bytes()) if store_file is not None and store_file.exists() else {}
    reused = sum(len(outputs) for outputs in store.values())
    rows = []
    for name in sets:  # the store is written after each set: a stopped run keeps what it asked
        try:
            found = compare(clf, [name], store, ("beam",), count, LONG_FEATURES if name in ("long", "longer") else FEATURES)
        finally:
            if store_file is not None:
                store_file.parent.mkdir(parents=True, exist_ok=True)
                store_file.with_suffix(".tmp").write_bytes(pickle.dumps(store))
                store_file.with_suffix(".tmp").replace(store_file)
        for r in found:
            rows.append(Row(f"NAOPC beam limits, {r['set']} {r['features']}, {r['texts']} texts N={r['n'][0]}-{r['n'][1]}",
                            "authors' beam B=5 (model inputs)", f"{r['theirs']:,}",
                            f"{r['ours']:,}; limits vs theirs: upper {r['up_mean']:+.4f} mean / {r['up_worst']:+.4f} worst, "
                            f"lower {r['lo_mean']:+.4f} / {r['lo_worst']:+.4f} ({r['looser']} texts > 0.01)",
                            f"{r['ratio']:.2f}x fewer"))
    if reused:
        print(f"[beam-sets] {reused:,} of {sum(len(o) for o in store.values()):,} model outputs read from {store_file}",
              file=sys.stderr, flush=True)
    return rows


def naopc_ceilings() -> str:
    """The most any search could save against the authors' B = 5 beam on their stored short texts, and what the
    cheapest searches lose there (bench/naopc_sets.py --ceilings; no model runs), as printed lines."""
    from naopc_sets import STORED_MODELS, ceilings, format_ceilings, stored_problems

    lines = ["Ceilings against the authors' B=5 on their stored outputs (bench/naopc_sets.py --ceilings):"]
    for features in [f"{d}_{m}" for d in ("sst2", "yelp") for m in STORED_MODELS]:
        problems = stored_problems(*features.split("_"))
        if problems:
            lines.append("  " + format_ceilings("stored", features, ceilings(problems)))
    return "\n".join(lines)


def naopc_tradeoff(clf, n_texts: int) -> str:
    """The trade-off curve of the one-run table: ours at B = 1, 2, 3 and the paper's beam, N = 10-13."""
    return tradeoff(clf, [int(round(x)) for x in np.linspace(10, 13, n_texts)],
                    ["beam:1", "beam:2", "beam:3", "beam-paper:1", "beam-paper:5"])


def naopc_exact_row(clf, n_words: int) -> Row:
    """Inputs/s of the exact limits (through naopc.compute's path) vs a plain batched forward of the same rows."""
    import torch

    from textxai import naopc

    text = texts_of_lengths(clf, [n_words])[0]
    scores = CachedScores(clf, text, "words")
    keys = list(range(1 << n_words))
    rows = scores.rows(keys)
    start = time.perf_counter()
    with torch.inference_mode():  # the floor: padding-free equal-length rows, batches of 64, softmax, nothing else
        ids = torch.as_tensor(np.stack([r for r, _ in rows]))
        for b in range(0, len(ids), 64):
            torch.softmax(clf.model(input_ids=ids[b: b + 64], attention_mask=torch.ones_like(ids[b: b + 64])).logits, -1)
    plain = time.perf_counter() - start
    start = time.perf_counter()
    res = naopc.compute([text], [np.zeros(n_words)], clf, normalization="exact", max_exact_words=n_words,
                              batch_size=64)
    ours = time.perf_counter() - start
    inputs = res["per_example"][0]["n_evaluations"]
    return Row(f"NAOPC exact limits, N={n_words} ({inputs:,} inputs)", "plain batched forward (inputs/s)",
               f"{len(keys) / plain:.0f}/s", f"{inputs / ours:.0f}/s (whole naopc.compute)",
               f"{(inputs / ours) / (len(keys) / plain):.2f} of the floor")


# --------------------------------------------------------------------------------------- LIME / SHAP
PEER_BATCHES = (16, 32, 64, 128, 256, 512)  # the lime package's predict_proba batch: the fastest of these, measured


def fastest_peer_batch(clf, text: str, rows: int = 512, perturbation: str = "mask") -> int:
    """The predict_proba batch size (rows) at which ``rows`` perturbed copies of ``text`` (removed words masked,
    or deleted) go fastest here: the peer gets its best batch on this machine today (idle 2 cores: 64-128 rows
    of ~30 tokens; loaded: larger)."""
    from textxai.attribution import lime_samples

    mask = " " if perturbation == "delete" else clf.tokenizer.mask_token
    masked = [" ".join(w if keep else mask for w, keep in zip(clf.words(text), row))
              for row in lime_samples(np.random.default_rng(0), len(clf.words(text)), rows)]
    clf.predict_proba(masked[:8])  # warm
    times = {}
    for batch in PEER_BATCHES:
        start = time.perf_counter()
        clf.predict_proba(masked, batch_size=batch)
        times[batch] = time.perf_counter() - start
    return min(times, key=times.get)


def heldout_texts(clf, buckets, per_bucket: int) -> dict[str, list[str]]:
    """Demo held-out sentiment texts (what a user has) grouped by word count: ``per_bucket`` texts per bucket."""
    from textxai import demo

    out = {}
    for lo, hi in buckets:
        texts = [t for t in demo.load_corpus("sentiment")["test_texts"] if lo <= len(clf.words(t)) <= hi]
        out[f"{lo}-{hi}"] = texts[:per_bucket]
    return {k: v for k, v in out.items() if v}


def lime_peer(clf, texts, targets, n_samples, seed, batch_size, perturbation: str = "delete", precision: str = "float32",
              cache: Path | None = None, seconds: list | None = None):
    """The ``lime`` package's LimeTextExplainer on the same words (``bow=False``: one feature per word position),
    a removed word deleted (``mask_string=" "``, ``perturbation="delete"``) or replaced by [MASK] (``"mask"``);
    a deleted word leaves a space, as ours leaves a word boundary: with ``mask_string=""`` lime glues the words
    around a removed punctuation mark ("blood-and-gore" without its hyphens is "bloodandgore", other word pieces),
    a different perturbation than deleting one word (on a 200-word review a random half-mask moved p by up to 0.07);
    classifier_fn = ``clf.predict_proba(xs, batch_size, precision)`` (one call per explanation, length-sorted
    batches, inference_mode; float32 unless told); lime's own kernel (cosine distance x 100, width 25). Each text
    gets its own explainer seeded with ``seed`` (a text's explanation does not depend on the texts before it).
    ``cache``: a JSON file keeping each explanation (text, target, samples, seed, perturbation, mask, precision) between
    runs (lime at 5,000 samples of a 200-word review is ~1 min of forward passes) with the seconds it took, appended
    to ``seconds`` when given (a cached explanation's own seconds)."""
    import hashlib

    from lime.lime_text import LimeTextExplainer

    from textxai.words import tokenize

    mask = " " if perturbation == "delete" else clf.tokenizer.mask_token
    stored = json.loads(cache.read_text()) if cache is not None and cache.exists() else {}
    out = []
    for text, target in zip(texts, targets):
        key = hashlib.sha256(json.dumps([text, int(target), n_samples, seed, perturbation, mask, precision,
                                         clf.fingerprint]).encode()).hexdigest()
        if key not in stored:
            start = time.perf_counter()
            explainer = LimeTextExplainer(bow=False, split_expression=lambda s: tokenize(s, clf.word_tokenizer),
                                          mask_string=mask, random_state=seed)
            n = len(clf.words(text))
            exp = explainer.explain_instance(
                text, lambda xs: clf.predict_proba(list(xs), batch_size=batch_size, precision=precision),
                labels=(target,), num_features=n, num_samples=n_samples)
            scores = np.zeros(n)
            for i, s in exp.as_map()[target]:
                scores[i] = s
            stored[key] = {"scores": scores.tolist(), "seconds": time.perf_counter() - start}
            if cache is not None:
                cache.parent.mkdir(parents=True, exist_ok=True)
                cache.write_text(json.dumps(stored))
        out.append(np.array(stored[key]["scores"]))
        if seconds is not None:
            seconds.append(stored[key]["seconds"])
    return out


def top5_overlap(a, b) -> float:
    return float(np.mean([len(set(np.argsort(-x)[:5]) & set(np.argsort(-y)[:5])) / min(5, len(x)) for x, y in zip(a, b)]))


def lime_groups(clf, per_group: int, long_words: int) -> dict[str, list[str]]:
    """Short texts (demo held-out texts of 10-40 words) and long ones (real reviews of ``long_words`` words)."""
    from real_texts import reviews_of_words, source

    short = [t for group in heldout_texts(clf, [(10, 11), (12, 15), (16, 40)], per_group).values() for t in group]
    return {f"{len(short)} short texts (10-40 words)": short,
            f"{per_group} long texts ({long_words} words, {source()})": reviews_of_words(clf, long_words, per_group)}


def lime_rows(clf, per_group: int, samples: tuple[int, ...], long_words: int = 200, batch_size: int = 32,
              perturbation: str = "delete") -> list[Row]:
    """LIME vs the lime package on its own terms: the same ``perturbation`` (lime removes words: "delete"), the
    same kernel, equal samples; one row per (samples, short / long texts): lime's seconds, ours at the default
    precision and in float32, and the top-5 overlap of ours (default precision) with lime next to lime's own
    seed-to-seed overlap."""
    from textxai.attribution import word_attributions

    groups = lime_groups(clf, per_group, long_words)
    # the peer's fastest batch per group, on its longest text (rows of 200-word texts: 32 beats 256 by 1.5x)
    batches = {name: fastest_peer_batch(clf, max(texts, key=len), perturbation=perturbation)
               for name, texts in groups.items()}
    precision = clf.resolve_precision("auto")
    rows = []
    for n_samples in samples:
        for name, texts in groups.items():
            peer_batch = batches[name]
            targets = clf.predict(texts).tolist()
            seconds, runs = [], {}
            for side in ("lime", "auto", "float32"):
                start = time.perf_counter()
                if side == "lime":
                    runs[side] = lime_peer(clf, texts, targets, n_samples, 0, peer_batch, perturbation)
                else:
                    runs[side] = word_attributions(texts, clf, "lime", target=targets, n_samples=n_samples,
                                                   batch_size=batch_size, precision=side, perturbation=perturbation)
                seconds.append(time.perf_counter() - start)
            lime1 = lime_peer(clf, texts, targets, n_samples, 1, peer_batch, perturbation)
            ours_vs = (top5_overlap(runs["auto"], runs["lime"]) + top5_overlap(runs["auto"], lime1)) / 2
            rows.append(Row(f"LIME {n_samples:,} samples, perturbation={perturbation}, {name}",
                            f"lime package, predict_proba batch {peer_batch} (s)", f"{seconds[0]:.1f}",
                            f"{seconds[1]:.1f} ({precision}); float32 {seconds[2]:.1f} s = {seconds[0] / seconds[2]:.2f}x; "
                            f"top-5 overlap with lime {ours_vs:.2f} (lime seed 0 vs 1: {top5_overlap(runs['lime'], lime1):.2f})",
                            f"{seconds[0] / seconds[1]:.2f}x faster"))
            print(f"[lime row] {rows[-1].workload} | {rows[-1].peer_figure} | {rows[-1].ours} | {rows[-1].ratio}",
                  file=sys.stderr, flush=True)  # as they come: the whole LIME workload takes ~20 min
    return rows


# lime's explanations at 5,000 samples of 200-word reviews (~1 min each on 2 idle cores, float32) kept between runs
BENCH_CACHE = Path(os.environ.get("TEXTXAI_BENCH_CACHE", Path(tempfile.gettempdir()) / "textxai-bench"))
LIME_PEER_CACHE = BENCH_CACHE / "lime_peer.json"
NAOPC_OUTPUTS = BENCH_CACHE / "naopc_outputs.pkl"


def lime_auto_row(clf, n_texts: int, n_words: int = 200, batch_size: int = 32, perturbation: str = "delete",
                  seeds: tuple[int, ...] = (0, 1)) -> Row:
    """LIME with ``n_samples="auto"`` (paired masks drawn by importance, scores shrunk toward omission's, stopped per
    text; its inputs count omission's single deletions) against the lime package at its default 5,000
    samples on ``n_texts`` real reviews of ``n_words`` words: model inputs, and the top-5 overlap of ours with lime
    (mean over lime's ``seeds``) next to lime's own seed-to-seed overlap; ours in float32 (the algorithm's gain) and
    at the default precision. On 200 words no two random masks coincide: lime's inputs are its samples."""
    from real_texts import reviews_of_words, source

    from textxai.attribution import REGISTRY, sampling_explanations

    texts = reviews_of_words(clf, n_words, n_texts)
    targets = clf.predict(texts).tolist()
    default = REGISTRY["lime"].default_samples
    ours, seconds = {}, {}

    def run_ours(precision):
        start = time.perf_counter()
        ours[precision] = sampling_explanations(texts, clf, "lime", target=targets, n_samples="auto",
                                                perturbation=perturbation, precision=precision, batch_size=batch_size)
        seconds[precision] = time.perf_counter() - start
        print(f"[lime-auto] ours {precision}: inputs per text {[e.inputs for e in ours[precision]]}, "
              f"{sum(e.inputs for e in ours[precision]):,} of lime's {default * len(texts):,} "
              f"({seconds[precision]:.0f} s)", file=sys.stderr, flush=True)

    run_ours("float32")  # first: its inputs (the ratio) need no peer; lime is the long part
    start = time.perf_counter()
    peer, peer_seconds = [[] for _ in seeds], []
    for i, (text, target) in enumerate(zip(texts, targets)):  # text by text (each kept in the cache as it comes)
        for run, seed in zip(peer, seeds):
            run += lime_peer(clf, [text], [target], default, seed, batch_size, perturbation, "float32", LIME_PEER_CACHE,
                             peer_seconds)
        print(f"[lime-auto] lime on text {i + 1} of {len(texts)}: seed-to-seed {top5_overlap([peer[0][-1]], [peer[1][-1]]):.2f}, "
              f"ours float32 vs seed 0 {top5_overlap([ours['float32'][i].scores], [peer[0][-1]]):.2f} "
              f"({time.perf_counter() - start:.0f} s)", file=sys.stderr, flush=True)
    t_peer = sum(peer_seconds) / len(seeds)  # lime's own seconds, measured when computed (cached or now)
    pairs = [(a, b) for i, a in enumerate(peer) for b in peer[i + 1:]]
    s2s = np.mean([top5_overlap(a, b) for a, b in pairs])
    run_ours("auto")

    def overlap(run):
        return np.mean([top5_overlap([e.scores for e in run], p) for p in peer])

    def inputs(run):
        return sum(e.inputs for e in run)

    f32, auto = ours["float32"], ours["auto"]
    peer_inputs = default * len(texts)  # 200-word masks never coincide (lime_distinct_masks)
    return Row(f"LIME n_samples='auto' vs lime's {default:,}, {len(texts)} texts of {n_words} words ({source()}), "
               f"perturbation={perturbation}",
               f"lime package {default:,} samples (model inputs; top-5 overlap seed to seed)",
               f"{peer_inputs:,} ({t_peer:.0f} s); seed-to-seed {s2s:.2f}",
               f"float32: {inputs(f32):,} inputs (per text {'/'.join(str(e.samples) for e in f32)} samples, stopped "
               f"{'/'.join(e.stopped for e in f32)}; {seconds['float32']:.0f} s), top-5 overlap with lime "
               f"{overlap(f32):.2f}; default ({clf.resolve_precision('auto')}): {inputs(auto):,} inputs, overlap "
               f"{overlap(auto):.2f} ({seconds['auto']:.0f} s)",
               f"{peer_inputs / inputs(f32):.2f}x fewer inputs (float32)")


def kernel_shap_row(clf, n_texts: int, n_samples: int, batch_size: int = 128) -> Row:
    import torch
    from captum.attr import KernelShap

    from textxai.attribution import word_attributions

    texts = [t for group in heldout_texts(clf, [(1, 11), (12, 15), (16, 40)], n_texts).values() for t in group]
    targets = clf.predict(texts).tolist()
    start = time.perf_counter()
    for text, target in zip(texts, targets):
        n = len(clf.words(text))

        def forward(present, text=text, target=target):
            probs = clf.masked_proba(text, present.detach().numpy() < 0.5, batch_size=batch_size)
            return torch.as_tensor(probs[:, target])

        torch.manual_seed(0)
        x = torch.ones((1, n), dtype=torch.float64)
        KernelShap(forward).attribute(x, baselines=torch.zeros_like(x), n_samples=n_samples,
                                      perturbations_per_eval=batch_size)
    t_peer = time.perf_counter() - start
    start = time.perf_counter()
    word_attributions(texts, clf, "kernel_shap", target=targets, n_samples=n_samples, batch_size=batch_size)
    t_ours = time.perf_counter() - start
    return Row(f"Kernel SHAP {n_samples:,} samples x {len(texts)} held-out texts", "captum KernelShap, "
               f"{batch_size} perturbations per forward (s)", f"{t_peer:.1f}",
               f"{t_ours:.1f} ({clf.resolve_precision('auto')})", f"{t_peer / t_ours:.2f}x faster")


# ---------------------------------------------------------------------------------------------- audit
def audit_row(n_reviews: int, limit_minutes: float = 10.0) -> Row:
    """The default audit of the first ``n_reviews`` IMDb reviews (bench/bench_audit.py --imdb N, a fresh cache) against
    issue 42's limit: 10 minutes for 200 reviews on 2 cores (scaled by N / 200 for a smaller run)."""
    import resource
    import tempfile

    from bench_audit import heldout, limit_row

    from textxai.cli import main as textxai

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        command = ["audit", "--model", "textxai/demo-sentiment", "--data", str(heldout(out, None, n_reviews)),
                   "--label-column", "label", "--output", str(out), "--no-progress"]
        start, used = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        assert textxai(command) == 0
        seconds = time.perf_counter() - start
        now = resource.getrusage(resource.RUSAGE_SELF)
        counted = sum(json.loads(f.read_text())["evaluations"] for f in (out / ".audit-cache").glob("model-*.json"))
    cpu = now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime
    return limit_row(n_reviews, seconds, counted, cpu, limit_minutes)


# ---------------------------------------------------------------------------------------------- table
def render(rows: list[Row], markdown: bool) -> str:
    head = ("workload", "peer", "peer's figure", "ours", "ratio")
    cells = [head] + [(r.workload, r.peer, r.peer_figure, r.ours, r.ratio) for r in rows]
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(c) + " |" for c in cells[1:]]
        return "\n".join(lines)
    widths = [max(len(c[i]) for c in cells) for i in range(len(head))]
    return "\n".join("  ".join(c[i].ljust(widths[i]) for i in range(len(head))) for c in cells)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a smoke run: few texts and samples (about 2 min)")
    parser.add_argument("--texts", type=int, default=None, help="NAOPC beam texts per feature kind (default 20, the issue's run)")
    parser.add_argument("--lime-texts", type=int, default=None, help="LIME held-out texts per length bucket (default 3)")
    parser.add_argument("--lime-auto-texts", type=int, default=10, help="200-word reviews of the LIME 'auto' row (10)")
    parser.add_argument("--audit-reviews", type=int, default=200, help="IMDb reviews of the audit row (200)")
    parser.add_argument("--toki-texts", type=int, default=200, help="TOKI training texts explained (the issue's 200)")
    parser.add_argument("--markdown", action="store_true", help="print the table as markdown (README)")
    parser.add_argument("--skip", nargs="*", default=[], choices=[
        "beam", "beam-sets", "tradeoff", "ceilings", "exact", "lime", "lime-auto", "shap", "toki", "fim", "ceval", "inconsistency", "lm", "audit"])
    args = parser.parse_args(argv)
    quick = args.quick
    import bench_ceval
    import bench_fim
    import bench_inconsistency
    import bench_lm
    from bench_toki import toki_row

    clf = demo_classifier()
    start = time.perf_counter()
    rows, notes = [], []
    workloads = {  # the cheap ones first: a run stopped by `timeout` (SIGTERM) still prints what it measured
        "fim": lambda: [bench_fim.report_row(clf, 16, 1)],  # the naive eigvalsh of D = 6,144 takes ~1 min
        "ceval": lambda: [r for r in [bench_ceval.report_row(60 if quick else 12)] if r is not None],
        "inconsistency": lambda: [bench_inconsistency.report_row(200 if quick else 2000, 3 if quick else 10)],
        "lm": lambda: [bench_lm.report_row(8 if quick else 32, 2 if quick else 8)] if bench_lm.L.packaged_lm_file() else [],
        "exact": lambda: [naopc_exact_row(clf, 8 if quick else 10)],
        "shap": lambda: [kernel_shap_row(clf, 1, 100 if quick else 500)],
        "lime-auto": lambda: [lime_auto_row(clf, 1 if quick else args.lime_auto_texts, 16 if quick else 200)],
        "lime": lambda: lime_rows(clf, args.lime_texts or (1 if quick else 2), (300,) if quick else (1000, 5000),
                                  40 if quick else 200),
        "toki": lambda: [toki_row(clf, 2 if quick else args.toki_texts, 300 if quick else 5000)],
        "beam": lambda: naopc_beam_rows(clf, args.texts or (2 if quick else 20)),
        "beam-sets": lambda: naopc_set_rows(clf, ["stored"] if quick else ["stored", "sst2", "yelp", "long", "longer"],
                                            None if not quick else 2, None if quick else NAOPC_OUTPUTS),
        "audit": lambda: [audit_row(5 if quick else args.audit_reviews)],
        "tradeoff": lambda: notes.append(naopc_tradeoff(clf, 1 if quick else 3)) or [],
        "ceilings": lambda: notes.append(naopc_ceilings()) or [],
    }
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        for name, run in workloads.items():
            if name in args.skip:
                continue
            began = time.perf_counter()
            try:
                new = run()
            except Exception as error:  # one broken workload must not cost the others (the note names it)
                notes.append(f"FAILED {name!r}: {type(error).__name__}: {error}")
                print(notes[-1], file=sys.stderr, flush=True)
                continue
            rows += new
            for r in new:  # as they come (a long run keeps what it measured)
                print(f"[{name} {time.perf_counter() - began:.0f} s] {r.workload} | {r.peer} | {r.peer_figure} | {r.ours} | "
                      f"{r.ratio}", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        notes.append(f"STOPPED during {name!r}: the workloads after it were not measured")
    print(f"\nmachine: {platform.machine()}, {__import__('os').cpu_count()} CPU cores, torch threads "
          f"{__import__('torch').get_num_threads()}; {time.strftime('%Y-%m-%d')}; {time.perf_counter() - start:.0f} s")
    print(render(rows, args.markdown))
    for note in notes:
        print("\n" + note)


if __name__ == "__main__":
    main()
