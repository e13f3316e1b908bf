"""Model evaluations per second of the demo classifier on this machine: the rate behind the Spaces' work budget
(textxai.spaces.EVALUATIONS_PER_SECOND, MAX_EVALUATIONS = 60 s of work).

    python bench/space_rate.py [--seconds 20] [--words 12 40 120]

Prints, per text length, masked-text evaluations per second of wall time and per CPU second (the rows LIME / omission / the NAOPC limits send
through ``TextClassifier.masked_proba``, batch 32), with the CPU count, torch threads and the load average.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np


def rate(clf, n_words: int, seconds: float) -> tuple[float, float]:
    """(evaluations per wall second, per CPU second of this process) for masked texts of ``n_words`` words."""
    text = " ".join(["the plot was thin but the acting was wonderful and the music moving"] * 20).split()[:n_words]
    text = " ".join(text)
    rng = np.random.default_rng(0)
    done, start, cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        masks = rng.integers(0, 2, size=(64, len(clf.words(text)))).astype(bool)
        clf.masked_proba(text, masks, batch_size=32)
        done += len(masks)
    return done / (time.perf_counter() - start), done / (time.process_time() - cpu)


def main() -> None:
    import torch

    from textxai.classifier import as_classifier

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--words", type=int, nargs="+", default=[12, 40, 120])
    args = parser.parse_args()
    clf = as_classifier("textxai/demo-sentiment")
    clf.predict_proba(["warm up"])
    print(f"cpus {os.cpu_count()}, torch threads {torch.get_num_threads()}, load average {os.getloadavg()[0]:.1f}")
    for n in args.words:  # per CPU second x cores: what an idle machine with these cores would do
        wall, cpu = rate(clf, n, args.seconds)
        print(f"{n:>4} words: {wall:6.1f} evaluations/s (wall), {cpu:6.1f} per CPU-second "
              f"(x{torch.get_num_threads()} threads idle: ~{cpu * torch.get_num_threads():.0f}/s)")


if __name__ == "__main__":
    main()
