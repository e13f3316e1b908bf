"""A zoo of tiny random models of the families users bring, built offline in seconds (tests and benchmarks).

Tokenizers are trained with the ``tokenizers`` library on the packaged corpora (``textxai/demo/data``) and
wrapped in the transformers class of each family, so their special tokens, post-processors and padding sides
are the real ones:

- WordPiece: BERT, DistilBERT, ELECTRA;
- byte-level BPE: RoBERTa, GPT-2 without and with ``add_prefix_space`` (pad = eos), Llama-style decoder
  classifiers (pad = eos);
- Unigram / Metaspace ``▁``: ALBERT, DeBERTa-v2, XLNet (left padding, no position table), T5.

Classifier variants (on BERT, the cheapest): 5 classes, multi-label, regression (refused), label schemes
(none, ids numbered 1..5, digit names '1'..'5', duplicate names), bfloat16 / float16 checkpoints,
``return_dict=False``. Causal LMs: GPT-2-like, Llama-like with a chat template, without BOS, with a BOS id
beyond the vocabulary, and a masked LM (to be refused as an LM).

>>> zoo = build_zoo(Path(tempfile.mkdtemp()))          # doctest: +SKIP
>>> zoo.classifiers["xlnet"].folder                    # doctest: +SKIP
'/tmp/.../xlnet'

``build_zoo`` writes every member as a ``save_pretrained`` folder; ``Member.parts()`` loads the
``(model, tokenizer)`` pair. Everything is seeded: the same zoo on every run.
"""
from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import torch

DATA = Path(__file__).resolve().parents[1] / "src" / "textxai" / "demo" / "data"
EXTRA = ("the movie was wonderful and the acting was great . a terrible boring film , i hated it ! "
         "it's fine , don't worry ? 1 2 3 4 5 stars : ( ) \" ; - ")
#: texts the invariants run on (short: exact NAOPC and the explicit FIM stay cheap)
TEXTS = ("a wonderful film", "the plot was boring , i hated it !", "not good but the service was lovely",
         "Unbelievable acting.")


@lru_cache(maxsize=1)
def corpus() -> tuple[str, ...]:
    """The packaged demo texts (sentiment and topic) plus a line of punctuation and digits."""
    texts = [json.loads(line)["text"] for name in ("sentiment", "topic")
             for line in (DATA / f"{name}.jsonl").read_text().splitlines() if line.strip()]
    return tuple(texts) + (EXTRA,)


# ----------------------------------------------------------------------------------------------- tokenizers
def _wordpiece_vocab(size: int = 700) -> dict[str, int]:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(corpus(), trainers.WordPieceTrainer(
        vocab_size=size, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], show_progress=False))
    return tok.get_vocab()


def _bpe(special: list[str], metaspace: bool = False, size: int = 600):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    if metaspace:
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        alphabet = []
    else:
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        alphabet = pre_tokenizers.ByteLevel.alphabet()
    tok.train_from_iterator(corpus(), trainers.BpeTrainer(vocab_size=size, special_tokens=special,
                                                          initial_alphabet=alphabet, show_progress=False))
    merges = json.loads(tok.to_str())["model"]["merges"]
    return tok.get_vocab(), [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in merges]


def _unigram(special: list[str], size: int = 600) -> list[tuple[str, float]]:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.train_from_iterator(corpus(), trainers.UnigramTrainer(vocab_size=size, special_tokens=special,
                                                              unk_token="<unk>", show_progress=False))
    return [tuple(piece) for piece in json.loads(tok.to_str())["model"]["vocab"]]


@lru_cache(maxsize=None)
def _trained(kind: str):
    if kind == "wordpiece":
        return _wordpiece_vocab()
    if kind == "bpe":
        return _bpe(["<s>", "<pad>", "</s>", "<unk>", "<mask>", "<|endoftext|>"])
    if kind == "llama_bpe":
        return _bpe(["<unk>", "<s>", "</s>"], metaspace=True)
    if kind == "unigram":
        return _unigram(["<pad>", "<unk>", "<s>", "</s>", "[CLS]", "[SEP]", "[MASK]", "<sep>", "<cls>", "<mask>"])
    raise KeyError(kind)


def tokenizer(family: str):
    """A fresh transformers tokenizer of ``family`` (see :data:`FAMILIES`)."""
    import transformers as tf

    if family in ("bert", "distilbert", "electra"):
        cls = {"bert": tf.BertTokenizer, "distilbert": tf.DistilBertTokenizer, "electra": tf.ElectraTokenizer}[family]
        return cls(vocab=_trained("wordpiece"), do_lower_case=True)
    if family == "roberta":
        vocab, merges = _trained("bpe")
        return tf.RobertaTokenizer(vocab=vocab, merges=merges)
    if family in ("gpt2", "gpt2_prefix"):
        vocab, merges = _trained("bpe")
        tok = tf.GPT2Tokenizer(vocab=vocab, merges=merges, add_prefix_space=family == "gpt2_prefix")
        tok.pad_token = tok.eos_token  # what GPT-2 classifiers ship with: pad = eos
        return tok
    if family == "llama":
        vocab, merges = _trained("llama_bpe")
        tok = tf.LlamaTokenizer(vocab=vocab, merges=merges)
        tok.pad_token = tok.eos_token
        return tok
    pieces = _trained("unigram")
    if family == "albert":
        return tf.AlbertTokenizer(vocab=pieces)
    if family == "deberta_v2":
        return tf.DebertaV2Tokenizer(vocab=pieces)
    if family == "xlnet":
        return tf.XLNetTokenizer(vocab=pieces)
    if family == "t5":
        return tf.T5Tokenizer(vocab=pieces, extra_ids=0)
    raise KeyError(family)


# ------------------------------------------------------------------------------------------------- models
def _config(family: str, vocab_size: int, tok, num_labels: int, **extra):
    import transformers as tf

    small = dict(num_labels=num_labels, **extra)
    if family == "bert":
        return tf.BertConfig(vocab_size=vocab_size, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                             intermediate_size=32, max_position_embeddings=128, initializer_range=0.3,
                             hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, **small)
    if family == "distilbert":
        return tf.DistilBertConfig(vocab_size=vocab_size, dim=16, n_layers=2, n_heads=2, hidden_dim=32,
                                   max_position_embeddings=128, dropout=0.0, attention_dropout=0.0,
                                   seq_classif_dropout=0.0, initializer_range=0.3, **small)
    if family == "electra":
        return tf.ElectraConfig(vocab_size=vocab_size, embedding_size=8, hidden_size=16, num_hidden_layers=2,
                                num_attention_heads=2, intermediate_size=32, max_position_embeddings=128,
                                hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, initializer_range=0.3,
                                **small)
    if family == "roberta":
        return tf.RobertaConfig(vocab_size=vocab_size, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                intermediate_size=32, max_position_embeddings=130, pad_token_id=tok.pad_token_id,
                                bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, initializer_range=0.3,
                                hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, **small)
    if family in ("gpt2", "gpt2_prefix"):
        return tf.GPT2Config(vocab_size=vocab_size, n_positions=128, n_embd=16, n_layer=2, n_head=2,
                             bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
                             resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, initializer_range=0.3, **small)
    if family == "llama":
        return tf.LlamaConfig(vocab_size=vocab_size, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                              num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=128,
                              bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                              pad_token_id=tok.pad_token_id, initializer_range=0.3, **small)
    if family == "albert":
        return tf.AlbertConfig(vocab_size=vocab_size, embedding_size=8, hidden_size=16, num_hidden_layers=2,
                               num_attention_heads=2, intermediate_size=32, max_position_embeddings=128,
                               hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, classifier_dropout_prob=0.0,
                               pad_token_id=tok.pad_token_id, initializer_range=0.3, **small)
    if family == "deberta_v2":
        return tf.DebertaV2Config(vocab_size=vocab_size, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                  intermediate_size=32, max_position_embeddings=128, hidden_dropout_prob=0.0,
                                  attention_probs_dropout_prob=0.0, pooler_dropout=0.0, pad_token_id=tok.pad_token_id,
                                  relative_attention=True, position_buckets=16, pos_att_type=["p2c", "c2p"],
                                  initializer_range=0.3, **small)
    if family == "xlnet":
        return tf.XLNetConfig(vocab_size=vocab_size, d_model=16, n_layer=2, n_head=2, d_inner=32, dropout=0.0,
                              summary_last_dropout=0.0, pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                              eos_token_id=tok.eos_token_id, initializer_range=0.3, **small)
    if family == "t5":
        return tf.T5Config(vocab_size=vocab_size, d_model=16, d_kv=8, d_ff=32, num_layers=1, num_decoder_layers=1,
                           num_heads=2, dropout_rate=0.0, classifier_dropout=0.0, pad_token_id=tok.pad_token_id,
                           eos_token_id=tok.eos_token_id, decoder_start_token_id=tok.pad_token_id,
                           initializer_factor=3.0, **small)
    raise KeyError(family)


MODEL_CLASSES = {"bert": "BertForSequenceClassification", "distilbert": "DistilBertForSequenceClassification",
                 "electra": "ElectraForSequenceClassification", "roberta": "RobertaForSequenceClassification",
                 "gpt2": "GPT2ForSequenceClassification", "gpt2_prefix": "GPT2ForSequenceClassification",
                 "llama": "LlamaForSequenceClassification", "albert": "AlbertForSequenceClassification",
                 "deberta_v2": "DebertaV2ForSequenceClassification", "xlnet": "XLNetForSequenceClassification",
                 "t5": "T5ForSequenceClassification"}
#: the architecture / tokenizer families of the zoo's classifiers
FAMILIES = tuple(MODEL_CLASSES)


def classifier(family: str, num_labels: int = 2, seed: int = 0, **config):
    """A tiny random ``...ForSequenceClassification`` of ``family`` and its tokenizer: ``(model, tokenizer)``."""
    import transformers as tf

    tok = tokenizer(family)
    torch.manual_seed(seed)
    model = getattr(tf, MODEL_CLASSES[family])(_config(family, len(tok), tok, num_labels, **config)).eval()
    return model, tok


@dataclass
class Member:
    """One zoo member: a ``save_pretrained`` folder and what it is."""

    name: str
    folder: str
    family: str
    kind: str = "classifier"  # "classifier" | "refused" (a classifier textxai must refuse) | "lm" | "not_lm"
    notes: dict = field(default_factory=dict)

    def parts(self):
        """``(model, tokenizer)`` loaded from the folder (the model in its saved dtype)."""
        import transformers as tf

        tok = tf.AutoTokenizer.from_pretrained(self.folder)
        if self.kind in ("lm", "not_lm"):
            loader = tf.AutoModelForCausalLM if self.kind == "lm" else tf.AutoModelForMaskedLM
        else:
            loader = tf.AutoModelForSequenceClassification
        return loader.from_pretrained(self.folder, dtype="auto").eval(), tok


@dataclass
class Zoo:
    root: Path
    classifiers: dict[str, Member]  # every family, plain (2 classes, float32)
    variants: dict[str, Member]  # heads, label schemes, dtypes, return_dict=False (BERT)
    refused: dict[str, Member]  # classifiers textxai must refuse with a clear error
    lms: dict[str, Member]  # causal LMs, and a masked LM that is not one

    @property
    def members(self) -> dict[str, Member]:
        return {**self.classifiers, **self.variants, **self.refused, **self.lms}


def _save(model, tok, folder: Path, **config_changes) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    if config_changes:
        path = folder / "config.json"
        config = json.loads(path.read_text())
        config.update(config_changes)
        path.write_text(json.dumps(config, indent=1))
    return str(folder)


def _variants(root: Path) -> tuple[dict, dict]:
    variants, refused = {}, {}

    def add(name, target, num_labels=2, kind="classifier", config_changes=None, dtype=None, notes=None, **config):
        model, tok = classifier("bert", num_labels=num_labels, seed=1, **config)
        if dtype is not None:
            model = model.to(dtype)
        folder = _save(model, tok, root / name, **(config_changes or {}))
        target[name] = Member(name, folder, "bert", kind, notes or {})

    add("bert_5class", variants, 5)
    add("bert_multilabel", variants, 3, problem_type="multi_label_classification")
    add("bert_noncontiguous", refused, 5, kind="refused", config_changes={
        "id2label": {str(i): f"{i} stars" for i in range(1, 6)}, "label2id": {f"{i} stars": i for i in range(1, 6)}},
        notes={"labels": [f"{i} stars" for i in range(1, 6)]})
    names = {str(i): str(i + 1) for i in range(5)}  # star ratings: class 0 is named '1'
    add("bert_digit_names", variants, 5, id2label=names, label2id={v: int(k) for k, v in names.items()},
        notes={"labels": list(names.values())})
    add("bert_bf16", variants, 2, dtype=torch.bfloat16, notes={"dtype": "bfloat16"})
    add("bert_fp16", variants, 2, dtype=torch.float16, notes={"dtype": "float16"})
    add("bert_tuple", variants, 2, config_changes={"return_dict": False})
    add("bert_regression", refused, 1, kind="refused", problem_type="regression")
    add("bert_duplicate_names", refused, 3, kind="refused", id2label={0: "pos", 1: "neg", 2: "pos"},
        label2id={"pos": 2, "neg": 1})
    return variants, refused


def _lms(root: Path) -> dict:
    import transformers as tf

    lms = {}
    vocab, merges = _trained("bpe")
    gtok = tf.GPT2Tokenizer(vocab=vocab, merges=merges)
    torch.manual_seed(2)
    gpt2 = tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=len(gtok), n_positions=64, n_embd=16, n_layer=2, n_head=2,
                                            bos_token_id=gtok.eos_token_id, eos_token_id=gtok.eos_token_id,
                                            initializer_range=0.3))
    lms["lm_gpt2"] = Member("lm_gpt2", _save(gpt2, gtok, root / "lm_gpt2"), "gpt2", "lm")
    ltok = tokenizer("llama")
    ltok.chat_template = ("{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}</s>{% endfor %}"
                          "{% if add_generation_prompt %}<s>assistant:{% endif %}")
    config = dict(vocab_size=len(ltok), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                  num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
                  eos_token_id=ltok.eos_token_id, initializer_range=0.3)
    for name, bos in (("lm_llama_chat", ltok.bos_token_id), ("lm_llama_no_bos", None),
                      ("lm_llama_bos_beyond", len(ltok) + 10)):
        torch.manual_seed(3)
        model = tf.LlamaForCausalLM(tf.LlamaConfig(bos_token_id=bos, **config))
        lms[name] = Member(name, _save(model, ltok, root / name), "llama", "lm", {"bos_token_id": bos})
    btok = tokenizer("bert")
    torch.manual_seed(4)
    mlm = tf.BertForMaskedLM(_config("bert", len(btok), btok, 2))
    lms["masked_lm_bert"] = Member("masked_lm_bert", _save(mlm, btok, root / "masked_lm_bert"), "bert", "not_lm")
    return lms


def build_zoo(root: Path | None = None) -> Zoo:
    """Every member written under ``root`` (a new temporary folder when None)."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    root = Path(tempfile.mkdtemp(prefix="textxai-zoo-")) if root is None else Path(root)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        classifiers = {}
        for family in FAMILIES:
            model, tok = classifier(family)
            classifiers[family] = Member(family, _save(model, tok, root / family), family)
        variants, refused = _variants(root)
        lms = _lms(root)
    finally:
        hf_logging.set_verbosity(verbosity)
    return Zoo(root, classifiers, variants, refused, lms)


_ZOO: Zoo | None = None


def session_zoo() -> Zoo:
    """One zoo per process (tests: the ``zoo`` fixture; benchmarks: call it)."""
    global _ZOO
    if _ZOO is None:
        _ZOO = build_zoo()
    return _ZOO


def black_box(clf):
    """A plain function ``texts -> class probabilities [n, C]`` (numpy) made from a ``TextClassifier``: what a
    user with a scikit-learn pipeline or a remote endpoint has."""
    def predict(texts):
        return clf.predict_proba(list(texts))
    return predict


if __name__ == "__main__":  # python tests/zoo.py: build once, print what was built and how long it took
    import time

    began = time.perf_counter()
    zoo = build_zoo()
    print(f"{len(zoo.members)} members in {time.perf_counter() - began:.1f} s under {zoo.root}")
    for member in zoo.members.values():
        print(f"  {member.name:24s} {member.kind:10s} {member.family}")
