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
CACHE_FORMAT = 1


def estimate(texts, num_labels: int, options: AuditOptions, labels: bool = False, model_name=None) -> dict[str, int]:
    """Model evaluations of each stage of one model's audit (errs on the side of more). Trust: TOKI's keyword
    index costs its training texts (``trust.train_texts``, or the demo's for a demo ``model_name``); without
    them it learns from the audited texts, whose explanations the assessment then reuses (counted once)."""
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
        chosen = [words[i] for i in faithfulness_indices(words, f)]
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
        out["counterfactual"] = sum(feedback_evaluations(sub, c.steps, editor=e, **(
            {"candidates": LLM["num_candidates"]} if e == "llm" else {})) + 2 * len(sub)
            for e in c.editors if e in ("substitution", "deletion", "llm"))
    if "connections" in s:
        out["connections"] = 4 * 3 * n
    return out


def fingerprint(clf, texts, labels, stage: str, options: AuditOptions) -> str:
    """What a stage's result depends on: the model (name, labels, size, weights, its words: word tokenizer, token
    limit and tokenizer), the texts and labels, the
    stage's own options and the interval settings (connections: those of difficulty and trust too), and for the
    stages run in ``run.precision`` the precision their forward passes resolve to on this machine."""
    from textxai.audit.options import PRECISION_STAGES
    from textxai.toki.index import weights_digest

    opts = to_dict(options)
    parts = {"overview": ["intervals"], "difficulty": ["difficulty", "intervals"],
             "faithfulness": ["faithfulness", "intervals"], "trust": ["trust", "intervals"],
             "counterfactual": ["counterfactual", "intervals"],
             "connections": ["difficulty", "trust", "intervals"]}[stage]
    key = [CACHE_FORMAT, stage, clf.fingerprint, weights_digest(clf), clf.word_view_key, list(texts),
           None if labels is None else [int(y) for y in labels], {p: opts[p] for p in parts}]
    if stage in PRECISION_STAGES + ("connections",):   # connections reads the trust stage
        key.append(clf.resolve_precision(options.run.precision))
    return hashlib.sha256(json.dumps(key, default=str).encode()).hexdigest()[:20]


class StageCache:
    """Finished stages as ``<folder>/.audit-cache/<tag>-<stage>.json`` (no folder: nothing is cached)."""

    def __init__(self, folder=None):
        self.folder = None if folder is None else Path(folder) / ".audit-cache"

    def load(self, tag: str, stage: str, key: str) -> dict | None:
        """``{"data", "seconds", "evaluations"}`` of a stage saved under ``key`` (the work it took then), else None."""
        if self.folder is None:
            return None
        path = self.folder / f"{tag}-{stage}.json"
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if saved.get("fingerprint") != key:
            return None
        return {"data": saved["data"], "seconds": saved.get("seconds", 0.0), "evaluations": saved.get("evaluations", 0)}

    def save(self, tag: str, stage: str, key: str, data: dict, seconds: float, evaluations: int) -> None:
        if self.folder is None:
            return
        from textxai.outputs import to_jsonable

        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{tag}-{stage}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"fingerprint": key, "saved": time.time(), "seconds": seconds,
                                   "evaluations": evaluations, "data": to_jsonable(data)}), encoding="utf-8")
        tmp.replace(path)   # atomic: an interrupted write leaves the previous file or none
