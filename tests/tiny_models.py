"""Tiny random BERT-style and RoBERTa-style classifiers, built offline in a few hundred milliseconds."""
from __future__ import annotations

from pathlib import Path

import torch

CORPUS = (
    "the movie was wonderful and the acting was great . a terrible boring film , i hated it ! "
    "the food was not good but the service was lovely . playing running jumping unbelievable "
    "premise hypothesis a man is sleeping outside . nobody is sleeping ? it's fine , don't worry"
).split()

BERT_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "!", "?", "'", "the", "a", "was", "and",
              "movie", "film", "good", "great", "bad", "not", "i", "it", "is", "man", "play", "run", "jump",
              "##ing", "##s", "##ed", "un", "##believ", "##able", "wonder", "##ful", "love", "##ly", "terr",
              "##ible", "do", "##n", "t", "s", "sleep", "outside", "nobody", "food", "service", "hate", "##d"]


def bert_tokenizer(folder: Path):
    from transformers import BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(BERT_VOCAB) + "\n")
    return BertTokenizerFast(str(folder / "vocab.txt"), do_lower_case=True)


def roberta_tokenizer(folder: Path):
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator([" ".join(CORPUS)] * 5, vocab_size=300, min_frequency=1,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"], show_progress=False)
    bpe.save_model(str(folder))
    return RobertaTokenizerFast(str(folder / "vocab.json"), str(folder / "merges.txt"))


def tiny_bert(num_labels: int = 2, seed: int = 0, initializer_range: float = 0.02):
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(BERT_VOCAB), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64, num_labels=num_labels,
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, initializer_range=initializer_range)
    return BertForSequenceClassification(config).eval()


def tiny_roberta(vocab_size: int, num_labels: int = 2, seed: int = 0):
    from transformers import RobertaConfig, RobertaForSequenceClassification

    torch.manual_seed(seed)
    config = RobertaConfig(vocab_size=vocab_size, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=32, max_position_embeddings=66, num_labels=num_labels, pad_token_id=1,
                           bos_token_id=0, eos_token_id=2, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return RobertaForSequenceClassification(config).eval()


def tiny_gpt2(vocab_size: int = 300, seed: int = 0):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=vocab_size, n_positions=64, n_embd=16, n_layer=2, n_head=2,
                        bos_token_id=0, eos_token_id=2, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return GPT2LMHeadModel(config).eval()


def tiny_bart(vocab_size: int, num_labels: int = 3, seed: int = 0, init_std: float = 0.5):
    """A tiny random BART sequence classifier (encoder-decoder); its tokenizer is ``roberta_tokenizer``.

    Encoder and decoder share the input embedding table (tied, BART's default); ``init_std`` 0.5 makes the
    probabilities far from uniform.
    """
    from transformers import BartConfig, BartForSequenceClassification

    torch.manual_seed(seed)
    config = BartConfig(vocab_size=vocab_size, d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=64,
                        num_labels=num_labels, pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
                        dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, classifier_dropout=0.0,
                        init_std=init_std)
    return BartForSequenceClassification(config).eval()


def tiny_gpt2_classifier(vocab_size: int, num_labels: int = 2, seed: int = 0):
    """A tiny random GPT-2 sequence classifier (decoder-only: the head reads the last non-padding token)."""
    from transformers import GPT2Config, GPT2ForSequenceClassification

    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=vocab_size, n_positions=64, n_embd=16, n_layer=2, n_head=2, num_labels=num_labels,
                        bos_token_id=0, eos_token_id=2, pad_token_id=1, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                        initializer_range=0.5)
    return GPT2ForSequenceClassification(config).eval()


def bart_logits_reference(model, ids, embeds, attention_mask):
    """BART's classifier written out: encoder on ``embeds``, decoder on ``embeds`` shifted right, head at the last </s>."""
    start = model.model.shared(torch.full_like(ids[:, :1], model.config.decoder_start_token_id))
    out = model.model(inputs_embeds=embeds, attention_mask=attention_mask,
                      decoder_inputs_embeds=torch.cat([start, embeds[:, :-1]], 1))
    hidden = out.last_hidden_state
    eos = ids.eq(model.config.eos_token_id)
    return model.classification_head(hidden[eos].view(ids.shape[0], -1, hidden.shape[-1])[:, -1])


def tiny_gguf(folder: Path, name: str = "tiny.gguf", seed: int = 0) -> Path:
    """A tiny random Llama causal LM written as a GGUF file with the ``gguf`` package (F32 tensors), with the
    byte-level BPE of :func:`roberta_tokenizer` and a chat template: what ``from_pretrained(folder,
    gguf_file=name)`` loads like the packaged SmolLM2 file, in a fraction of a second."""
    import json

    import gguf
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    roberta_tokenizer(folder / "bpe")
    vocab = json.loads((folder / "bpe" / "vocab.json").read_text())
    merges = [line for line in (folder / "bpe" / "merges.txt").read_text().splitlines()[1:] if line.strip()]
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    size, hidden, ffn, layers, heads = len(tokens), 16, 32, 2, 2
    writer = gguf.GGUFWriter(str(folder / name), "llama")
    writer.add_name("tiny")
    writer.add_context_length(64)
    writer.add_embedding_length(hidden)
    writer.add_block_count(layers)
    writer.add_feed_forward_length(ffn)
    writer.add_head_count(heads)
    writer.add_head_count_kv(heads)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(hidden // heads)
    writer.add_vocab_size(size)
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(tokens)
    writer.add_token_types([gguf.TokenType.CONTROL if t.startswith("<") else gguf.TokenType.NORMAL for t in tokens])
    writer.add_token_merges(merges)
    writer.add_bos_token_id(0)
    writer.add_eos_token_id(2)
    writer.add_pad_token_id(1)
    writer.add_chat_template("{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}</s>{% endfor %}"
                             "{% if add_generation_prompt %}<s>assistant:{% endif %}")
    rng = np.random.default_rng(seed)

    def tensor(key, *shape, ones=False):
        writer.add_tensor(key, np.ones(shape, np.float32) if ones else (rng.standard_normal(shape) * 0.5).astype(np.float32))

    tensor("token_embd.weight", size, hidden)
    tensor("output.weight", size, hidden)
    tensor("output_norm.weight", hidden, ones=True)
    for i in range(layers):
        for part in ("attn_q", "attn_k", "attn_v", "attn_output"):
            tensor(f"blk.{i}.{part}.weight", hidden, hidden)
        tensor(f"blk.{i}.ffn_gate.weight", ffn, hidden)
        tensor(f"blk.{i}.ffn_up.weight", ffn, hidden)
        tensor(f"blk.{i}.ffn_down.weight", hidden, ffn)
        tensor(f"blk.{i}.attn_norm.weight", hidden, ones=True)
        tensor(f"blk.{i}.ffn_norm.weight", hidden, ones=True)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return folder / name
