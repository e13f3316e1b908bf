"""Demo-model build: the training step on per-text vectors (textxai.demo._build) vs the naive step.

Naive baseline: fine-tune the top layer the usual way, with the lower layers' token states cached,
running the whole top layer over every token of every text each step (attention mask as the model
builds it). Fast path: the top layer is mean pooling (query = 0), so only two vectors per text enter
the trainable part and one step is a few small matrix products. Same texts, same number of steps,
1 thread (as the build uses). Prints seconds per step of each and the ratio.

    .venv/bin/python bench/bench_demo.py [--texts 270] [--steps 10]
"""
from __future__ import annotations

import argparse
import time

import torch

from textxai import demo
from textxai.demo import _build


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=270)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    corpus = demo.load_corpus("sentiment")
    texts, labels = corpus["train_texts"][: args.texts], torch.tensor(corpus["train_labels"][: args.texts])
    model, tokenizer = _build.load_base(list(demo.LABELS["sentiment"]))
    top = model.bert.encoder.layer[-1]
    with torch.no_grad():
        top.attention.self.query.weight.zero_()
        top.attention.self.query.bias.zero_()

    started = time.perf_counter()
    means, cls = _build.lower_features(model, tokenizer, texts)
    encode = time.perf_counter() - started

    # naive: token states after the lower layers, padded, through the full top layer
    batch = tokenizer(texts, padding=True, return_tensors="pt")
    layers = model.bert.encoder.layer
    model.bert.encoder.layer = torch.nn.ModuleList(list(layers)[:-1])
    with torch.no_grad():
        states = model.bert(**batch).last_hidden_state
    model.bert.encoder.layer = layers
    from transformers.masking_utils import create_bidirectional_mask

    mask = create_bidirectional_mask(config=model.config, inputs_embeds=states, attention_mask=batch["attention_mask"])
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)

    def naive_step():
        hidden = top(states, mask)
        logits = model.classifier(model.dropout(model.bert.pooler(hidden)))
        loss = torch.nn.functional.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    def fast_step():
        loss = torch.nn.functional.cross_entropy(_build.head_logits(model, means, cls), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    timings = {}
    for name, step in (("naive", naive_step), ("fast", fast_step)):
        step()  # warm-up
        started = time.perf_counter()
        for _ in range(args.steps):
            step()
        timings[name] = (time.perf_counter() - started) / args.steps
    print(f"{len(texts)} texts, {states.shape[1]} tokens padded; lower-layer encoding once: {encode:.2f} s")
    print(f"naive top-layer step {timings['naive'] * 1e3:.1f} ms, fast vector step {timings['fast'] * 1e3:.1f} ms, "
          f"ratio naive/fast = {timings['naive'] / timings['fast']:.1f}x")


if __name__ == "__main__":
    main()
