"""The whole audit's work, estimated per stage before anything runs (:mod:`textxai.estimates`; no model call),
and the stage cache: each finished stage is saved in the output folder under a fingerprint of the model, the
data and that stage's options, so an interrupted audit resumes where it stopped and a change invalidates it.

>>> from textxai.audit.options import audit_options
>>> plan = estimate(["a fine film", "dull and long"], 2, audit_options({"sections": ["difficulty"]}), labels=True)
>>> sorted(plan), plan["difficulty"] > 0
(['difficulty', 'overview'], True)
"""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from textxai import estimates
from textxai.audit.options import AuditOptions, faithfulness_indices, to_dict
from textxai.fim.method import fim_evaluations
from textxai.inconsistency.method import feedback_evaluations
from textxai.naopc.method import naopc_evaluations
from textxai.toki.method import toki_evaluations

#: Bumped when a stage's saved data changes shape (older caches are then recomputed).
CACHE_FORMAT = 3   # 2: exact count intervals, the overview's baseline / confusion / errors; 3: the methods' own readings, chains


#: How much one evaluation of each stage costs against one plain forward pass (the probe's unit): FIM's
#: evaluations are forward + backward passes through the embeddings (about 3 forwards); the others forward passes.
STAGE_COST = {"difficulty": 3.0}
#: Texts of the probe (spread over the audited texts: their lengths decide the cost of a pass).
PROBE_TEXTS = 8


def probe(clf, texts, batch_size: int = 32) -> dict:
    """Seconds per model evaluation on this machine: a short timed pass of the model over :data:`PROBE_TEXTS`
    audited texts spread over the data (after one warm-up pass on a single text). What the up-front estimate
    turns evaluations into time with; ``{"texts", "evaluations", "seconds", "seconds_per_evaluation"}``."""
    import warnings

    k = min(PROBE_TEXTS, len(texts))
    sample = [texts[round(i * (len(texts) - 1) / max(k - 1, 1))] for i in range(k)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # truncation: said by the stages
        clf.predict_proba(sample[:1], batch_size=1)
        started = time.perf_counter()
        clf.predict_proba(sample, batch_size=batch_size)
        seconds = time.perf_counter() - started
    return {"texts": k, "evaluations": k + 1, "seconds": round(seconds, 4), "seconds_per_evaluation": seconds / k}


def planned_seconds(plan: dict[str, int], seconds_per_evaluation: float) -> dict[str, float]:
    """Each stage's estimated time: its evaluations x the probe's seconds per evaluation x :data:`STAGE_COST`.

    >>> planned_seconds({"overview": 100, "difficulty": 10}, 0.01)
    {'overview': 1.0, 'difficulty': 0.3}
    """
    return {k: round(v * seconds_per_evaluation * STAGE_COST.get(k, 1.0), 1) for k, v in plan.items()}


def seen_words(clf, texts) -> list[int | None]:
    """Words of each text the model sees (inside its ``max_length`` token window; tokenizer only, no model call),
    None for a text it sees whole: NAOPC scores those alone (``naopc.texts._fit_to_model``: a longer text is cut
    after its last seen word)."""
    import warnings

    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the truncation warning: the stage says it when it runs
        encodings = clf.word_encodings(list(texts))
    for encoding in encodings:
        seen = encoding.seen_words
        n = int(seen.max()) + 1 if seen.size else 0
        out.append(None if n >= encoding.n_words else n)
    return out


def estimate(texts, num_labels: int, options: AuditOptions, labels: bool = False, model_name=None,
             clf=None) -> dict[str, int]:
    """Model evaluations of each stage of one model's audit (errs on the side of more). Trust: TOKI's keyword
    index costs its training texts (``trust.train_texts``, or the demo's for a demo ``model_name``); without
    them it learns from the audited texts, whose explanations the assessment then reuses (counted once).
    Faithfulness: NAOPC on the words the model sees (``clf`` given: :func:`seen_words`, the texts cut at its token
    window as NAOPC cuts them; else every word)."""
    words = [estimates.approx_words(t) for t in texts]
    n, out = len(words), {"overview": len(words)}
    s = set(options.sections)
    if "difficulty" in s:
        d = options.difficulty
        size = min(d.test_set_size, max(n // 2, 1))
        out["difficulty"] = (fim_evaluations(n, num_labels)
                             + fim_evaluations(d.hardest, num_labels, min_flip=True)
                             + 2 * size * (num_labels + len(d.strengths) + 1))
    if "faithfulness" in s:
        f = options.faithfulness
        picked = faithfulness_indices(words, f)
        chosen = ([words[i] if n is None else n for i, n in zip(picked, seen_words(clf, [texts[i] for i in picked]))]
                  if clf is not None else [words[i] for i in picked])
        out["faithfulness"] = naopc_evaluations(chosen, f.normalization, None,
                                                          f.max_exact_words, list(f.methods))
    if "trust" in s or "connections" in s:
        t = options.trust
        from textxai.audit.trust import demo_training

        given = t.train_texts if t.train_texts is not None else (demo_training(model_name) or [None])[0]
        limit = t.train_limit if t.train_texts is not None else None   # a demo's index: all its packaged texts
        train = [] if given is None else [estimates.approx_words(x) for x in given][:limit]
        # the assessed texts; when the index learns from the audited texts, those it learns from too (each explained once)
        assessed = words[: t.max_texts] if given is not None else words[: max(t.train_limit, t.max_texts or len(words))]
        attacked = words[: t.attack_texts]
        out["trust"] = (toki_evaluations(train, assessed, t.explainer)
                        + 2 * toki_evaluations([], [], t.explainer, index_cached=True, attack_words=attacked,
                                                         max_rate=t.max_rate))
    if "counterfactual" in s:
        c = options.counterfactual
        sub = words[: c.max_texts]
        from textxai.llm_editor import DEFAULTS as LLM

        # the LLM editor: its k candidates per text and step (prompt passes, generated tokens, one prediction each)
        editors = [e for e in c.editors if e in ("substitution", "deletion", "llm")]
        out["counterfactual"] = sum(feedback_evaluations(sub, c.steps, editor=e, **(
            {"candidates": LLM["num_candidates"]} if e == "llm" else {})) + 2 * len(sub) for e in editors)
        if c.judge != "none":   # the judge read from its probabilities: 4 forwards per chosen counterfactual
            out["counterfactual"] += len(editors) * estimates.judge_evaluations(len(sub))
    if "connections" in s:
        out["connections"] = 4 * 3 * n
    return out


def model_digest(clf) -> str:
    """The model's weights by content (:func:`textxai.classifier.content_digest`: every parameter and buffer by
    name, dtype, shape and bytes, so two head rows swapped get another key whatever the per-tensor sums).
    Computed once per model per audit (:func:`run_model`)."""
    from textxai.classifier import content_digest

    return content_digest(clf.model)


def fingerprint(clf, texts, labels, stage: str, options: AuditOptions, digest: str | None = None) -> str:
    """What a stage's result depends on: the model (name, labels, size, its weights by content
    (:func:`model_digest`; ``digest`` when the caller computed it already), its words: word tokenizer, token limit
    and tokenizer), the texts and labels, the stage's own options and the interval settings (connections: those of
    difficulty and trust too), and for the stages run in ``run.precision`` the precision their forward passes
    resolve to on this machine. The ONE key of the stage cache."""
    from textxai.audit.options import PRECISION_STAGES

    opts = to_dict(options)
    parts = {"overview": ["intervals"], "difficulty": ["difficulty", "intervals"],
             "faithfulness": ["faithfulness", "intervals"], "trust": ["trust", "intervals"],
             "counterfactual": ["counterfactual", "intervals"],
             "connections": ["difficulty", "trust", "intervals"]}[stage]
    key = [CACHE_FORMAT, stage, clf.fingerprint, digest or model_digest(clf), clf.word_view_key, list(texts),
           None if labels is None else [int(y) for y in labels], {p: opts[p] for p in parts}]
    if stage in PRECISION_STAGES + ("connections",):   # connections reads the trust stage
        key.append(clf.resolve_precision(options.run.precision))
    return hashlib.sha256(json.dumps(key, default=str).encode()).hexdigest()[:20]


class StageCache:
    """Finished stages as ``<folder>/.audit-cache/<tag>-<stage>.json`` (no folder: nothing is cached)."""

    def __init__(self, folder=None):
        self.folder = None if folder is None else Path(folder) / ".audit-cache"

    def load(self, tag: str, stage: str, key: str) -> dict | None:
        """``{"data", "seconds", "evaluations", "cpu_seconds"}`` of a stage saved under ``key`` (the work it took
        then; ``cpu_seconds`` None in a cache written before it was recorded), else None."""
        if self.folder is None:
            return None
        path = self.folder / f"{tag}-{stage}.json"
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if saved.get("fingerprint") != key:
            return None
        return {"data": saved["data"], "seconds": saved.get("seconds", 0.0), "evaluations": saved.get("evaluations", 0),
                "cpu_seconds": saved.get("cpu_seconds")}

    def save(self, tag: str, stage: str, key: str, data: dict, seconds: float, evaluations: int,
             cpu_seconds: float | None = None) -> None:
        if self.folder is None:
            return
        from textxai.outputs import to_jsonable

        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{tag}-{stage}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"fingerprint": key, "saved": time.time(), "seconds": seconds,
                                   "evaluations": evaluations, "cpu_seconds": cpu_seconds, "data": to_jsonable(data)}),
                       encoding="utf-8")
        tmp.replace(path)   # atomic: an interrupted write leaves the previous file or none
