"""The packaged LM (SmolLM2-135M-Instruct, Q4_1 GGUF dequantized to float32) on CPU: perplexity and generation.

1. Perplexity of the demo held-out texts (``textxai.lm.perplexity``: length-sorted batches, NLL as logsumexp
   minus the target logit) against a plain batched forward of the same token rows (the same batches, the
   model's logits and nothing else): the ratio is the price of the NLL, the floor is the forward itself.
2. Generation: greedy replies to CEval's edit prompt for the same texts (``textxai.lm.generate``: batched, left
   padded, the KV cache of ``generate``), new tokens per second, next to the forward limit (tokens a plain
   forward scores per second) and to generation without the KV cache (each new token a full forward of the
   prompt and the reply so far, batched the same way) on a few texts.

    .venv/bin/python bench/bench_lm.py [--texts 32] [--gen-texts 8]
"""
from __future__ import annotations

import argparse
import time

import torch

from textxai import lm as L
from textxai.batching import length_sorted_batches
from textxai.classifier import frozen_eval
from textxai.demo import demo_texts
from textxai.llm_editor import edit_messages


def plain_forward_seconds(model, texts, batch_size: int = 16) -> tuple[float, int]:
    """Seconds of a batched forward of the texts' token rows (BOS first, right padded) and the tokens scored."""
    rows = [[model.bos_token_id] + ids for ids in model.tokenizer(texts, add_special_tokens=False)["input_ids"]]
    t0 = time.perf_counter()
    with torch.inference_mode(), frozen_eval(model.model):
        for chunk in length_sorted_batches([len(r) for r in rows], batch_size):
            length = max(len(rows[i]) for i in chunk)
            ids = torch.zeros((len(chunk), length), dtype=torch.long)
            mask = torch.zeros_like(ids)
            for j, i in enumerate(chunk):
                ids[j, : len(rows[i])] = torch.tensor(rows[i])
                mask[j, : len(rows[i])] = 1
            model.model(input_ids=ids, attention_mask=mask)
    return time.perf_counter() - t0, sum(len(r) - 1 for r in rows)


def no_cache_generate(model, prompts, new_tokens: int) -> int:
    """Greedy generation without the KV cache (one full forward per new token), one prompt at a time."""
    made = 0
    with torch.inference_mode(), frozen_eval(model.model):
        for prompt in prompts:
            ids = model.tokenizer(L.chat_text(model, prompt), add_special_tokens=False)["input_ids"]
            for _ in range(new_tokens):
                nxt = int(model.model(input_ids=torch.tensor([ids])).logits[0, -1].argmax())
                ids.append(nxt)
                made += 1
                if nxt == model.tokenizer.eos_token_id:
                    break
    return made


def measure(n_texts: int = 32, gen_texts: int = 8, new_tokens: int = 32) -> dict:
    t0 = time.perf_counter()
    model = L.as_lm(L.PACKAGED_LM)
    load = time.perf_counter() - t0
    texts = demo_texts("sentiment", n_texts)
    L.perplexity(texts[:2], model)                                    # warm up
    floor, scored = plain_forward_seconds(model, texts)
    t0 = time.perf_counter()
    L.perplexity(texts, model)
    ppl = time.perf_counter() - t0
    prompts = [edit_messages(t, "negative", "positive") for t in texts[:gen_texts]]
    t0 = time.perf_counter()
    replies = L.generate(model, prompts, new_tokens)
    gen = time.perf_counter() - t0
    made = sum(len(model.tokenizer(r, add_special_tokens=False)["input_ids"]) for r in replies)
    few = prompts[:2]
    t0 = time.perf_counter()
    slow_made = no_cache_generate(model, few, new_tokens)
    slow = time.perf_counter() - t0
    t0 = time.perf_counter()
    fast_made = sum(len(model.tokenizer(r, add_special_tokens=False)["input_ids"])
                    for r in L.generate(model, few, new_tokens, batch_size=1))
    fast = time.perf_counter() - t0
    return {"load_s": load, "texts": len(texts), "scored_tokens": scored, "forward_s": floor, "perplexity_s": ppl,
            "forward_tokens_per_s": scored / floor, "perplexity_tokens_per_s": scored / ppl,
            "generated_tokens": made, "generation_s": gen, "generation_tokens_per_s": made / gen,
            "cache_tokens_per_s": fast_made / fast, "no_cache_tokens_per_s": slow_made / slow}


def report_row(n_texts: int = 32, gen_texts: int = 8):
    """One row of bench/report.py: perplexity vs the plain forward of the same tokens; generation tokens/s."""
    from rows import Row

    m = measure(n_texts, gen_texts)
    return Row(f"perplexity, packaged SmolLM2-135M ({m['texts']} demo texts, {m['scored_tokens']:,} tokens); "
               f"greedy generation {gen_texts} prompts", "plain batched forward of the same tokens (tokens/s)",
               f"{m['forward_tokens_per_s']:,.0f}",
               f"{m['perplexity_tokens_per_s']:,.0f} tokens/s; generation {m['generation_tokens_per_s']:.1f} new tokens/s "
               f"(KV cache {m['cache_tokens_per_s']:.1f} vs none {m['no_cache_tokens_per_s']:.1f}, 1 prompt at a time)",
               f"{m['perplexity_s'] / m['forward_s']:.2f}x the forward")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=32)
    parser.add_argument("--gen-texts", type=int, default=8)
    args = parser.parse_args()
    m = measure(args.texts, args.gen_texts)
    for key, value in m.items():
        print(f"{key:<26} {value:,.2f}")
    print(f"perplexity / plain forward: {m['perplexity_s'] / m['forward_s']:.2f}x")


if __name__ == "__main__":
    main()
