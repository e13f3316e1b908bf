"""Every number of the FIM card's contrast-set section, recomputed on the demo model we ship.

    python examples/fim_contrast_set.py [--reference ../shared/reference] [--limit N]

Reads the expert IMDb contrast set of the CEval benchmark's copy (``ceval/datasets/imdb/expert/
test_{original,contrast}.tsv``, 488 row-aligned pairs; the folder sits beside the repository as
``../shared/reference``), runs the card's command on it (``textxai run fim_difficulty --data
test_original.tsv --text-column Text --label-column Sentiment --shift-against test_contrast.tsv``; or reads
the ``fim_difficulty.json`` such a run wrote, ``--from-json``) and prints the card's table and bullet numbers: median / mean / quantiles of
λ_max, the shift λ(contrast) − λ(original), the overlap of the two log-λ histograms, the rank correlation of
the two difficulties of a pair, accuracy overall and on the easiest / hardest quarter, the hardest and
easiest originals. About 10 minutes on 2 busy CPU cores for the full set.
"""
from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
from scipy import stats

from textxai import cli

DEFAULT_REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference"


def histogram_overlap(a: np.ndarray, b: np.ndarray, bins: int = 30) -> float:
    """Shared area of the two normalised histograms of log10 values (1 = identical, 0 = disjoint)."""
    la, lb = np.log10(a), np.log10(b)
    edges = np.linspace(min(la.min(), lb.min()), max(la.max(), lb.max()), bins + 1)
    pa, _ = np.histogram(la, edges)
    pb, _ = np.histogram(lb, edges)
    return float(np.minimum(pa / pa.sum(), pb / pb.sum()).sum())


def card_numbers(result: dict) -> dict:
    """The numbers the card quotes, from the ``fim_difficulty.json`` of ``textxai run fim_difficulty``."""
    orig = np.asarray(result["difficulty"], float)
    shift = result["shift"]
    contrast = orig + np.asarray(shift["values"], float)
    quantiles = {name: (float(np.quantile(orig, q)), float(np.quantile(contrast, q)))
                 for name, q in (("q10", 0.1), ("median", 0.5), ("q90", 0.9))}
    return {
        "n_pairs": len(orig),
        "quantiles": quantiles,
        "mean_std": ((float(orig.mean()), float(orig.std())), (float(contrast.mean()), float(contrast.std()))),
        "shift": {k: float(shift[k]) for k in ("mean", "std", "median", "fraction_increased")},
        "fraction_increased_by_more_than_1": float(np.mean(contrast - orig > 1.0)),
        "log_histogram_overlap": histogram_overlap(orig, contrast),
        "pair_spearman": float(stats.spearmanr(orig, contrast).statistic),
        "accuracy": result["accuracy"],
        "hardest": result["hardest"][0],
        "easiest": result["easiest"][0],
    }


def run_card_command(reference: Path, model: str, output: Path) -> dict:
    """``textxai run fim_difficulty`` on the expert contrast set; its JSON."""
    folder = reference / "ceval" / "datasets" / "imdb" / "expert"
    status = cli.main(["run", "fim_difficulty", "--model", model, "--data", str(folder / "test_original.tsv"),
                       "--text-column", "Text", "--label-column", "Sentiment",
                       "--shift-against", str(folder / "test_contrast.tsv"), "--output", str(output)])
    if status:
        raise SystemExit(status)
    return json.loads((output / "fim_difficulty.json").read_text())


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, default=DEFAULT_REFERENCE)
    parser.add_argument("--model", default="textxai/demo-sentiment")
    parser.add_argument("--from-json", type=Path, default=None, help="fim_difficulty.json of an earlier run")
    args = parser.parse_args(argv)
    if args.from_json:
        result = json.loads(args.from_json.read_text())
    else:
        with tempfile.TemporaryDirectory() as tmp:
            result = run_card_command(args.reference, args.model, Path(tmp))
    numbers = card_numbers(result)
    q, ((m0, s0), (m1, s1)) = numbers["quantiles"], numbers["mean_std"]
    print(f"{numbers['n_pairs']} pairs\n")
    print("| | originals | contrast set |\n|---|---|---|")
    print(f"| median λ_max | {q['median'][0]:.2f} | {q['median'][1]:.2f} |")
    print(f"| mean λ_max (std) | {m0:.2f} ({s0:.2f}) | {m1:.2f} ({s1:.2f}) |")
    print(f"| 10 % / 90 % quantile | {q['q10'][0]:.2f} / {q['q90'][0]:.2f} | {q['q10'][1]:.2f} / {q['q90'][1]:.2f} |")
    s = numbers["shift"]
    print(f"\nshift: mean {s['mean']:+.2f}, std {s['std']:.2f}, median {s['median']:+.3f}; "
          f"{s['fraction_increased']:.1%} harder ({numbers['fraction_increased_by_more_than_1']:.1%} by more than 1)")
    print(f"log-λ histogram overlap {numbers['log_histogram_overlap']:.0%}, "
          f"pair Spearman {numbers['pair_spearman']:.2f}")
    acc = numbers["accuracy"]
    print(f"accuracy {acc['all']:.0%}; easiest quarter {acc['easiest_quarter']:.0%}, "
          f"hardest quarter {acc['hardest_quarter']:.0%}")
    for name in ("hardest", "easiest"):
        ex = numbers[name]
        print(f"{name}: λ_max {ex['difficulty']:.3g} {ex['text'][:80]!r} (words: {', '.join(ex['sensitive_words'])})")
    return numbers


if __name__ == "__main__":
    main()
