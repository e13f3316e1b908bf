"""Per-input cost of the classifier's forward passes by tokens per batch (the reason for
``textxai.batching.CPU_BATCH_TOKENS``): rows of L tokens in batches of 32 rows vs batches capped at 512 ... 4,096
tokens, float32 and bfloat16 (where native), best of 3, the demo model on this machine.

    .venv/bin/python bench/bench_batch_tokens.py [--lengths 40 120 220 300 400 512]
"""
from __future__ import annotations

import argparse
import time

import torch

from textxai.batching import CPU_BATCH_TOKENS
from textxai.classifier import as_classifier, native_bfloat16

CAPS = (512, 1024, 2048, 4096, None)  # None: 32 rows whatever their length (before CPU_BATCH_TOKENS)


def per_row_ms(model, length: int, rows: int, precision: str, inputs: int = 128) -> float:
    ids = torch.randint(1000, 20000, (rows, length))
    attention = torch.ones_like(ids)
    lower = torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bfloat16")
    with torch.inference_mode(), lower:
        model(input_ids=ids, attention_mask=attention)  # warm-up
        batches = max(1, inputs // rows)
        started = time.perf_counter()
        for _ in range(batches):
            model(input_ids=ids, attention_mask=attention)
    return (time.perf_counter() - started) / (batches * rows) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[40, 120, 220, 300, 400, 512])
    args = parser.parse_args()
    clf = as_classifier("textxai/demo-sentiment")
    model = clf.model.eval()
    precisions = ["float32"] + (["bfloat16"] if native_bfloat16(clf.device) else [])
    print(f"ms per input (best of 3), {torch.get_num_threads()} threads; CPU_BATCH_TOKENS = {CPU_BATCH_TOKENS}")
    print("| precision | tokens/row | " + " | ".join("32 rows" if c is None else f"<= {c} tokens" for c in CAPS)
          + " | 32 rows / capped |")
    print("|---" * (len(CAPS) + 3) + "|")
    for precision in precisions:
        for length in args.lengths:
            best = {}
            for _ in range(3):
                for cap in CAPS:
                    rows = 32 if cap is None else max(1, min(32, cap // length))
                    ms = per_row_ms(model, length, rows, precision)
                    best[cap] = min(best.get(cap, ms), ms)
            ratio = best[None] / best[CPU_BATCH_TOKENS]
            print(f"| {precision} | {length} | " + " | ".join(f"{best[c]:.2f}" for c in CAPS) + f" | {ratio:.2f}x |",
                  flush=True)


if __name__ == "__main__":
    main()
