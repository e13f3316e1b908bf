"""Explanation metrics alongside training: a 🤗 transformers ``TrainerCallback``.

``TextxaiCallback`` runs textxai modules on the model being trained at every evaluation (or every N-th)
and logs their scalar results with the evaluation's prefix (``eval_naopc_comprehensiveness``, ...):
they go to ``trainer.state.log_history`` and to every reporting integration (TensorBoard, W&B, ...)
through ``Trainer.log``, and into the dict that ``trainer.evaluate()`` returns (so
``metric_for_best_model`` and early stopping can use them).

The texts are given raw to the callback: ``EvalPrediction`` carries no texts, and texts decoded from
token ids lose words (``"boring"`` -> ``[UNK]``). Each module gets the inputs it needs from the data
given here (its descriptor's ``inputs``, :func:`module_inputs`); its options are its ``compute`` keyword arguments.

The model comes back as it was: its train/eval mode, ``requires_grad`` flags and ``.grad`` fields are
untouched (``textxai.classifier.frozen_eval``), and so are the random number generators (Python,
NumPy, torch), so a run with the callback trains exactly like one without it.

>>> from transformers import TrainerState, TrainerControl, TrainingArguments
>>> from textxai.classifier import as_classifier
>>> demo = as_classifier("textxai/demo-sentiment")
>>> callback = TextxaiCallback({"fim_difficulty": {}}, texts=["a wonderful film", "a dull film"])
>>> metrics = {"eval_loss": 0.1}
>>> _ = callback.on_evaluate(TrainingArguments("out", report_to=[]), TrainerState(), TrainerControl(),
...                          metrics=metrics, model=demo.model, processing_class=demo.tokenizer)
>>> sorted(k for k in metrics if k.startswith("eval_fim"))[:3]
['eval_fim_difficulty_summary_max', 'eval_fim_difficulty_summary_mean', 'eval_fim_difficulty_summary_median']
"""
from __future__ import annotations

import logging
import time
from dataclasses import fields

import torch
from transformers import TrainerCallback

from textxai.callback_setup import (PRESETS, TRAINING_BOUNDS, TRAINING_PRESETS, TRAINING_TEXTS, TRAINING_WORDS,
                                    CallbackInputs, CallbackOptions, _accepted, _black_box, _compute_argument,
                                    _first_rows, _first_words, _module_specs, _preset_options, _required, _rows,
                                    check_data, flat_scalars, module_inputs, rng_untouched)
from textxai.options import apply_keywords
from textxai.validation import check_positive_int, short_repr

logger = logging.getLogger(__name__)

class TextxaiCallback(TrainerCallback):
    """Run textxai modules on the model being trained at evaluations and log their scalars.

    ``TextxaiCallback("naopc", eval_texts, every=2)`` is the common case; the rest are option groups whose
    fields are also accepted as plain keywords (``labels=...``, ``batch_size=8``; see ``textxai.options``).

    Args:
        modules: a module name (``"naopc"``), a loaded module (``textxai.load("naopc")``), a list of them,
            or a dict ``{name or module: options}`` where options are the module's ``compute`` keyword
            arguments, e.g. ``{"naopc": {"attribution_method": "gradient", "normalization": "beam"}}``.
            ``model`` / ``tokenizer`` are set by the callback.
        texts: the raw evaluation texts (a shortcut for ``inputs.texts``).
        trainer: the ``Trainer``; the callback adds itself and logs through ``trainer.log``, so the scalars
            reach every reporting integration. Without it (``Trainer(callbacks=[callback])``) they go
            into the evaluation's own ``log_history`` entry and ``evaluate()``'s result only. Given, every
            module is dry-run on one text (the one with the most words) with ``trainer.model`` here, so a bad
            option fails now, not after an hour of training; without it the dry run comes at ``on_train_begin``.
        every: run at the 1st, (1+every)-th, (1+2*every)-th ... evaluation (default every evaluation).
        time_budget: seconds per evaluation; a module is skipped, with a logged note, once the budget is
            spent or when its previous run would not fit in what is left (``None``: no limit). Neither
            ``every`` nor the budget applies to the module whose scalar ``metric_for_best_model`` names: it runs
            at every evaluation (a value carried from an older model would make the Trainer keep the wrong
            checkpoint), with a logged note when it overruns the budget.
        strict: a module that fails during training raises (stopping ``trainer.train()``); default False: the
            failure is logged, counted in ``{prefix}_textxai_failed`` and training continues (the failed
            module's scalars are NaN when ``metric_for_best_model`` names it, so that model is never the best).
        preset: ``"training"``: each module's cheap options (:data:`TRAINING_PRESETS`, under the options given)
            on the first :data:`TRAINING_TEXTS` texts, NAOPC's cut to their first :data:`TRAINING_WORDS` words
            (exact limits): at most :data:`TRAINING_BOUNDS` model evaluations (docs/guides/training.md).
        inputs: :class:`CallbackInputs` (text_pairs, labels, counterfactuals, counterfactual_pairs, edits).
        options: :class:`CallbackOptions` (tokenizer, batch_size, progress, prefix).
        **keywords: any field of the two groups; it overrides the same field of a group given beside it.

    Every evaluation logs its cost: ``{prefix}_textxai_evaluations`` (model evaluations: input rows through
    the networks) and ``{prefix}_textxai_runtime`` (seconds), and a logged line beside the Trainer's own.
    """

    def __init__(self, modules, texts=None, *, trainer=None, every: int = 1, time_budget: float | None = None,
                 strict: bool = False, preset: str | None = None, inputs: CallbackInputs | None = None,
                 options: CallbackOptions | None = None, **keywords):
        if texts is not None:
            keywords["texts"] = texts
        groups = apply_keywords("TextxaiCallback", keywords, inputs=(CallbackInputs, inputs),
                                options=(CallbackOptions, options))
        inputs, options = groups["inputs"], groups["options"]
        if preset is not None and preset not in PRESETS:
            raise ValueError(f"preset={short_repr(preset)}: expected one of {list(PRESETS)} or None")
        if not isinstance(strict, bool):
            raise TypeError(f"strict={short_repr(strict)}: expected True or False")
        self.strict, self.preset = strict, preset
        self.specs = _module_specs(modules)
        if preset == "training":
            self.specs = [(name, module, {**_preset_options(name, module), **module_options})
                          for name, module, module_options in self.specs]
        self.data = check_data(**{f.name: getattr(inputs, f.name) for f in fields(inputs)})
        if preset == "training":
            self.data = _first_rows(self.data, TRAINING_TEXTS)
        #: the data each module runs on (the preset's NAOPC: its texts cut to TRAINING_WORDS words)
        self.module_data = {name: _first_words(self.data, TRAINING_WORDS[name])
                            if preset == "training" and name in TRAINING_WORDS else self.data
                            for name, _, _ in self.specs}
        for name, _, module_options in self.specs:
            missing = [field for field in _required(name)
                       if self.data[field] is None and _compute_argument(name, field) not in module_options]
            if missing:
                raise ValueError(f"modules: {name} needs {' and '.join(missing)}; pass {missing[0]}=... to the callback")
        self.every = check_positive_int(every, "every")
        if time_budget is not None and (isinstance(time_budget, bool) or not isinstance(time_budget, (int, float))
                                        or not time_budget >= 0):
            raise ValueError(f"time_budget={short_repr(time_budget)}: expected seconds >= 0 or None")
        self.time_budget = time_budget
        self.batch_size = None if options.batch_size is None else check_positive_int(options.batch_size, "batch_size")
        self.progress = bool(options.progress)
        if not isinstance(options.prefix, str) or not options.prefix:
            raise ValueError(f"prefix={short_repr(options.prefix)}: expected a non-empty string such as 'eval'")
        self.prefix = options.prefix
        self.tokenizer = options.tokenizer
        self.trainer = trainer
        self.durations: dict[str, float] = {}  # seconds of each module's last run
        self.evaluations: dict[str, int] = {}  # model evaluations of each module's last run
        self.skipped: list[tuple[int, str]] = []  # (global step, module) of every skipped run
        self.failures: list[tuple[int, str, str]] = []  # (global step, module, error) of every failed run
        self.keys: dict[str, list[str]] = {}  # module -> its scalar keys (from the dry run)
        self._rounds = 0
        self._last: tuple[int, dict] | None = None
        self.last_values: dict[str, tuple[int | None, dict]] = {}  # module -> (step, its scalars) of its last run
        self._needed: str | None = None  # the module metric_for_best_model names
        self._warned_no_trainer = False
        self._clock = time.perf_counter
        if trainer is not None:
            model = getattr(trainer, "model", None)
            tokenizer = self.tokenizer if self.tokenizer is not None else getattr(trainer, "processing_class", None)
            if model is not None and tokenizer is not None:
                self.dry_run(model, tokenizer, getattr(trainer.args, "per_device_eval_batch_size", None))
            self._needed = self._check_metric(getattr(trainer.args, "metric_for_best_model", None))
            if self not in trainer.callback_handler.callbacks:
                trainer.add_callback(self)

    # --------------------------------------------------------------- checks at build
    def dry_run(self, model, tokenizer, batch_size: int | None = None) -> dict[str, list[str]]:
        """Run every module once on one text (the one with the most words; chain 1 of ``edits``): a bad option,
        a missing input or a text past a module's limit fails here, naming the module, before any training
        step. Returns (and keeps in :attr:`keys`) each module's scalar keys."""
        from textxai.estimates import approx_words

        with rng_untouched():
            for name, module, options in self.specs:
                texts = self.module_data[name]["texts"]
                row = max(range(len(texts)), key=lambda i: approx_words(texts[i])) if texts else 0
                one = _rows(self.module_data[name], [row])
                kwargs = self._compute_kwargs(name, module, options, model, tokenizer, batch_size, one)
                try:
                    results = module.compute(**kwargs)
                except Exception as exc:
                    where = f"text {row} ({short_repr(texts[row])})" if texts else "the first edit chain"
                    raise ValueError(f"modules[{name!r}]: the dry run on {where} failed, so it would fail during "
                                     f"training: {type(exc).__name__}: {exc}") from exc
                self.keys[name] = sorted(flat_scalars(results, f"{self.prefix}_{name}"))
        return self.keys

    def _check_metric(self, metric: str | None) -> str | None:
        """The module ``metric_for_best_model`` names; a textxai key no module gives is refused, naming those
        it gives; the raw AOPC keys (not comparable across models) get a warning naming the normalised one."""
        name = self._needed_module(metric)
        if name is None:
            return None
        key = metric if metric.startswith("eval_") else f"eval_{metric}"
        if name in self.keys and key not in self.keys[name]:
            raise ValueError(f"metric_for_best_model={metric!r}: {name} gives no scalar {key!r}; expected one of "
                             f"{self.keys[name]}")
        raw = {f"{self.prefix}_naopc_comprehensiveness": "naopc_naopc_comprehensiveness",
               f"{self.prefix}_naopc_sufficiency": "naopc_naopc_sufficiency"}
        if name == "naopc" and key in raw:
            logger.warning("textxai: metric_for_best_model=%r is the raw AOPC, which depends on how confident each "
                           "checkpoint is and is not comparable across models; name the normalised one, "
                           "metric_for_best_model=%r", metric, raw[key])
        return name

    # --------------------------------------------------------------- running
    def evaluate(self, model, tokenizer=None, batch_size: int | None = None, step: int | None = None,
                 needed: str | None = None, only_needed: bool = False) -> dict[str, float]:
        """Run every module on ``model`` now and return their flat ``{prefix}_{module}_{key}`` scalars.

        Usable from a plain PyTorch loop as well, and with a black-box function texts -> class probabilities as
        ``model`` (no tokenizer; a module that needs gradients fails naming why). Adds ``{prefix}_textxai_runtime`` (seconds),
        ``{prefix}_textxai_evaluations`` (model evaluations), ``{prefix}_textxai_skipped`` (modules skipped by the
        time budget) and ``{prefix}_textxai_failed`` (modules that failed, ``strict=False``). ``needed``: a
        module that runs whatever the budget (``metric_for_best_model``'s); ``only_needed``: run it alone (a
        round ``every`` skips).
        """
        tokenizer = tokenizer if tokenizer is not None else self.tokenizer
        if tokenizer is None and not _black_box(model):
            shown = type(model).__name__ if isinstance(model, torch.nn.Module) else short_repr(model)
            raise ValueError(f"tokenizer=None: the callback needs the tokenizer of model={shown}; pass "
                             "tokenizer=... or give the Trainer a processing_class (a black-box function texts -> "
                             "class probabilities needs none)")
        from textxai.batching import work_budget

        scalars: dict[str, float] = {}
        start = self._clock()
        n_skipped = n_failed = n_evaluations = 0
        with rng_untouched():
            for name, module, options in self.specs:
                if only_needed and name != needed:
                    continue
                reason = self._over_budget(name, self._clock() - start)
                if reason and name == needed:
                    logger.warning("textxai: %s runs at step %s although %s: metric_for_best_model names it",
                                   name, step, reason)
                elif reason:
                    n_skipped += 1
                    self.skipped.append((step, name))
                    logger.warning("textxai: %s skipped at step %s: %s", name, step, reason)
                    continue
                kwargs = self._compute_kwargs(name, module, options, model, tokenizer, batch_size)
                began = self._clock()
                try:
                    with work_budget(what=f"textxai callback, {name}") as budget:
                        results = module.compute(**kwargs)
                except Exception as exc:
                    if self.strict:
                        raise
                    n_failed += 1
                    self.failures.append((step, name, f"{type(exc).__name__}: {exc}"))
                    logger.warning("textxai: %s failed at step %s and is left out (strict=False; training goes on): "
                                   "%s: %s", name, step, type(exc).__name__, exc)
                    if name == needed:  # the Trainer must find the key; NaN is never the best
                        keys = self.keys.get(name) or sorted(self.last_values.get(name, (None, {}))[1])
                        scalars.update(dict.fromkeys(keys, float("nan")))
                    continue
                self.durations[name] = self._clock() - began
                self.evaluations[name] = budget.used
                n_evaluations += budget.used
                self.last_values[name] = (step, flat_scalars(results, f"{self.prefix}_{name}"))
                scalars.update(self.last_values[name][1])
        runtime = round(self._clock() - start, 4)
        scalars[f"{self.prefix}_textxai_runtime"] = runtime
        scalars[f"{self.prefix}_textxai_evaluations"] = float(n_evaluations)
        scalars[f"{self.prefix}_textxai_skipped"] = float(n_skipped)
        scalars[f"{self.prefix}_textxai_failed"] = float(n_failed)
        return scalars

    def _over_budget(self, name: str, elapsed: float) -> str | None:
        if self.time_budget is None:
            return None
        if elapsed >= self.time_budget:
            return f"the time budget of {self.time_budget} s is spent ({elapsed:.1f} s)"
        previous = self.durations.get(name)
        if previous is not None and elapsed + previous > self.time_budget:
            return (f"its last run took {previous:.1f} s, more than the {self.time_budget - elapsed:.1f} s left "
                    f"of the time budget of {self.time_budget} s")
        return None

    def _compute_kwargs(self, name, module, options, model, tokenizer, batch_size, data=None) -> dict:
        data = self.module_data[name] if data is None else data
        accepted, _ = _accepted(module)
        kwargs = {argument: data[field] for argument, field in module_inputs(name).items()
                  if data[field] is not None}
        if "model" in accepted:
            kwargs["model"] = model if tokenizer is None and _black_box(model) else (model, tokenizer)
        if "batch_size" in accepted and (batch_size or self.batch_size):
            kwargs["batch_size"] = self.batch_size or batch_size
        if "progress" in accepted:
            kwargs["progress"] = self.progress
        kwargs.update(options)
        return kwargs

    # ------------------------------------------------------------- callbacks
    def on_train_begin(self, args, state, control, model=None, processing_class=None, **kwargs):
        tokenizer = self.tokenizer if self.tokenizer is not None else processing_class
        if not self.keys and model is not None and tokenizer is not None:
            self.dry_run(model, tokenizer, args.per_device_eval_batch_size)
        self._needed = self._check_metric(getattr(args, "metric_for_best_model", None))

    def on_train_end(self, args, state, control, **kwargs):
        # load_best_model_at_end has put another model in place at the same global_step: nothing cached holds
        self._last = None

    def _needed_module(self, metric: str | None) -> str | None:
        """The module whose scalar ``metric`` (``metric_for_best_model``) names, or None (not a textxai key)."""
        if not metric:
            return None
        key = metric if metric.startswith("eval_") else f"eval_{metric}"  # the Trainer's rule
        names = [name for name, _, _ in self.specs if key.startswith(f"{self.prefix}_{name}_")]
        return max(names, key=len) if names else None

    def on_evaluate(self, args, state, control, metrics=None, model=None, processing_class=None, **kwargs):
        if metrics is None or model is None:
            return
        keys_logged = set(metrics)
        if self._last is not None and self._last[0] == state.global_step:
            # another evaluation of the same weights (a second eval dataset) during training
            metrics.update(self._last[1])
            return
        if self._needed is None:
            self._needed = self._needed_module(getattr(args, "metric_for_best_model", None))
        self._rounds += 1
        skipped_round = bool((self._rounds - 1) % self.every)
        if skipped_round and self._needed is None:
            return
        scalars = self.evaluate(model, self.tokenizer if self.tokenizer is not None else processing_class,
                                args.per_device_eval_batch_size, step=state.global_step, needed=self._needed,
                                only_needed=skipped_round)
        own = metrics.get("eval_runtime")
        logger.info("textxai at step %s: %d model evaluations in %.2f s (%s)%s", state.global_step,
                    scalars[f"{self.prefix}_textxai_evaluations"], scalars[f"{self.prefix}_textxai_runtime"],
                    ", ".join(f"{n} {self.evaluations.get(n, 0)}" for n, _, _ in self.specs),
                    "" if own is None else f"; the Trainer's own evaluation took {own:.2f} s")
        self._last = (state.global_step, scalars)
        metrics.update(scalars)
        self._log(scalars, state, keys_logged)

    def _log(self, scalars: dict, state, keys_logged: set) -> None:
        """Through ``trainer.log`` (every reporting integration), else into the evaluation's log_history entry."""
        if self.trainer is not None:
            self.trainer.log(dict(scalars))
            return
        entry = next((e for e in reversed(state.log_history)
                      if e.get("step") == state.global_step and keys_logged <= set(e)), None)
        if entry is not None:
            entry.update(scalars)
        if not self._warned_no_trainer:
            self._warned_no_trainer = True
            logger.warning("textxai: TextxaiCallback without trainer=...: its scalars are in log_history and in "
                           "evaluate()'s result, but reporting integrations (TensorBoard, W&B) do not see them; "
                           "pass trainer=trainer to log them through Trainer.log")


__all__ = ["TextxaiCallback", "TRAINING_PRESETS", "TRAINING_TEXTS", "TRAINING_WORDS", "TRAINING_BOUNDS", "CallbackInputs", "CallbackOptions", "flat_scalars", "rng_untouched", "module_inputs"]
