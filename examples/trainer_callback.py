"""Explanation metrics logged during training: a transformers Trainer with textxai's callback.

A small BERT (2 layers, random init, the packaged MiniLM's tokenizer) learns the demo sentiment corpus
for a few steps; at every evaluation the callback runs NAOPC (gradient attributions) and the FIM
difficulty on 4 held-out raw texts and logs ``eval_naopc_*`` / ``eval_fim_difficulty_*`` next to
``eval_loss``. Offline, under a minute on 2 CPU cores:

    python examples/trainer_callback.py [--steps 30] [--eval-steps 10] [--output-dir DIR]
"""
from __future__ import annotations

import argparse
import tempfile

import torch
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification, DataCollatorWithPadding, Trainer,
                          TrainingArguments)

from textxai import demo
from textxai.demo._build import base_model_path
from textxai.integrations import TextxaiCallback


class Encoded(torch.utils.data.Dataset):
    def __init__(self, tokenizer, texts, labels):
        self.rows = [dict(tokenizer(text, truncation=True, max_length=64), labels=label) for text, label in zip(texts, labels)]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--eval-steps", type=int, default=10)
    parser.add_argument("--output-dir", default=None, help="Trainer output folder (default: a temporary one)")
    args = parser.parse_args(argv)

    corpus = demo.load_corpus("sentiment")
    tokenizer = AutoTokenizer.from_pretrained(base_model_path())
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128, num_labels=2,
                        id2label={0: "negative", 1: "positive"}, label2id={"negative": 0, "positive": 1})
    model = BertForSequenceClassification(config)

    eval_texts, eval_labels = demo.demo_examples("sentiment", n=4)          # raw texts, not token ids
    with tempfile.TemporaryDirectory() as tmp:
        trainer = Trainer(
            model=model,
            args=TrainingArguments(output_dir=args.output_dir or tmp, max_steps=args.steps, eval_strategy="steps",
                                   eval_steps=args.eval_steps, logging_steps=args.eval_steps, learning_rate=3e-3,
                                   per_device_train_batch_size=16, per_device_eval_batch_size=16, report_to=[],
                                   save_strategy="no", use_cpu=True, disable_tqdm=True, seed=0),
            train_dataset=Encoded(tokenizer, corpus["train_texts"], corpus["train_labels"]),
            eval_dataset=Encoded(tokenizer, corpus["test_texts"], corpus["test_labels"]),
            data_collator=DataCollatorWithPadding(tokenizer),
            processing_class=tokenizer,
        )
        TextxaiCallback(
            {"naopc": {"attribution_method": "gradient", "normalization": "beam", "beam_size": 2},
             "fim_difficulty": {}},
            texts=eval_texts, labels=eval_labels,
            trainer=trainer,            # adds itself; logs through trainer.log -> log_history, TensorBoard, W&B ...
            time_budget=30,             # seconds per evaluation; a module that would overrun is skipped, with a note
        )
        trainer.train()
    rows = [e for e in trainer.state.log_history if "eval_naopc_comprehensiveness" in e]  # skipped: absent
    for e in rows:
        print(f"step {e['step']:>3}: NAOPC comprehensiveness {e['eval_naopc_naopc_comprehensiveness']:.3f}  "
              f"sufficiency {e['eval_naopc_naopc_sufficiency']:.3f}  "
              f"mean FIM difficulty {e['eval_fim_difficulty_summary_mean']:.3g}")
    print(f"{len(rows)} evaluations with textxai scalars in trainer.state.log_history")
    return rows


if __name__ == "__main__":
    main()
