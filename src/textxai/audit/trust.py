"""The Trust section (TOKI: trust rate, shortcut candidates, the three verdicts' agreement, attack vs random) and
the Connections section (hardest vs untrustworthy; shortcut words removed or replaced -> flips), as plain data.
"""
from __future__ import annotations

import numpy as np

from textxai import toki
from textxai.audit import numbers as nb
from textxai.audit.options import TrustOptions
from textxai.parallel import on_main, split
from textxai.validation import ClassIndices

VERDICTS = (("label", "TOKI"), ("naive", "Naive"), ("no_ki", "TOKI(-K.I)"))


#: Training texts of a demo model's keyword index (:data:`textxai.demo.index_texts.INDEX_TEXTS`).
DEMO_TRAINING_TEXTS = 60


def demo_knowledge(model_name):
    """What the audit knows of a demo model (its index's training texts and labels, its corpus) through the demo
    package's one function, :func:`textxai.demo.index_texts.demo_knowledge`; None for any other model."""
    from textxai.demo.index_texts import demo_knowledge as knowledge

    return knowledge(model_name, DEMO_TRAINING_TEXTS)


def demo_training(model_name) -> tuple[list[str], list[int]] | None:
    """The training texts and labels a demo model's keyword index learns from (:func:`demo_knowledge`); None for
    any other model.

    >>> len(demo_training("textxai/demo-sentiment")[0]), demo_training("my/model")
    (60, None)
    """
    known = demo_knowledge(model_name)
    return None if known is None else (list(known.texts), list(known.labels))


def explain_options(options: TrustOptions, batch_size: int = 32, progress: bool = False,
                    precision: str = "float32") -> toki.ExplainOptions:
    """How the trust stage explains, its keyword index's training texts and the audited texts alike (so an audited
    text that is also a training text is explained once: the remembered explanation, same key):
    ``precision`` of the perturbation explainers (omission, LIME, Kernel SHAP; the gradient ones ignore it)."""
    return toki.ExplainOptions(options.explainer, top_k=options.top_k, batch_size=batch_size, progress=progress,
                               explainer_options={"precision": precision})


def class_names(options: TrustOptions) -> list | None:
    """``trust.class_names`` as TOKI's ``class_names``: an entry joined by commas ("negative,bad,poor", a flag or
    config) is a list of anchor words.

    >>> class_names(TrustOptions(class_names=("negative,bad", "positive")))
    [['negative', 'bad'], 'positive']
    """
    return None if options.class_names is None else [
        [w.strip() for w in c.split(",") if w.strip()] if isinstance(c, str) and "," in c else c for c in options.class_names]


def check_class_names(clf, options: TrustOptions, model: str = "model") -> None:
    """Before any stage runs: TOKI needs a word per class (``trust.class_names``, or the model's own label names);
    a model with generic labels (LABEL_0, ...) and no ``trust.class_names``, or a list of another length than the
    model's classes, is refused naming the option (the trust stage would fail after the earlier stages had run)."""
    from textxai.toki.index import _generic, resolve_class_anchors

    names, labels = class_names(options), list(clf.labels.values())
    example = " ".join(f"name{k}" for k in range(clf.num_labels))
    if names is None and any(_generic(v) for v in labels):
        raise ValueError(f"trust.class_names is not given and {model}={clf.name!r} has generic labels {labels}: TOKI "
                         f"relates each explanation to words naming its class; expected one name (or comma-joined "
                         f"anchor words) per class: --trust.class_names {example}")
    if names is not None and len(names) != clf.num_labels:
        raise ValueError(f"trust.class_names={list(options.class_names)!r}: {len(names)} entries, but {model}="
                         f"{clf.name!r} has {clf.num_labels} classes {labels}; expected one entry per class")
    resolve_class_anchors(clf, names)   # the rest (an empty entry, ...) as TOKI checks it


def keyword_index(clf, texts, references, options: TrustOptions, batch_size: int = 32, progress: bool = False,
                  precision: str = "float32"):
    """TOKI's keyword index and where its training texts came from: ``options.train_texts``; else, for a demo
    model, its packaged training texts (the demo's index); else the audited texts with their labels (their
    explanations, in ``precision``, are then the assessment's too)."""
    from textxai.embeddings import EMBEDDER_NAMES

    explain = explain_options(options, batch_size, progress, precision)
    index = toki.IndexOptions(embedders=list(EMBEDDER_NAMES), class_names=class_names(options))
    if options.train_texts is not None:
        train = list(options.train_texts)[: options.train_limit]
        labels = ClassIndices(clf.class_index(y, f"train_labels[{i}]")
                              for i, y in enumerate(list(options.train_labels or [])[: len(train)]))
        if len(labels) != len(train):
            raise ValueError(f"trust.train_labels has {len(labels)} labels for {len(train)} training texts: expected one each")
        source = f"{len(train)} training texts given"
    elif demo_training(clf.name) is not None:
        train, labels = demo_training(clf.name)
        source = f"the demo model's first {DEMO_TRAINING_TEXTS} training texts"
    else:
        train, labels = list(texts)[: options.train_limit], ClassIndices(references)[: options.train_limit]
        source = (f"the audited texts themselves ({len(train)}; no training texts given: the keywords are learnt "
                  "from the texts they judge, an optimistic setting)")
    built = toki.cached_keyword_index(clf, train, ClassIndices(int(y) for y in labels), explain=explain, index=index)
    return built, source


def unlearnable_classes(clf, labels, predictions, options: TrustOptions) -> list[str]:
    """The classes TOKI's keyword index cannot learn when it learns from the audited texts (no training texts
    given, not a demo model): none of the first ``train_limit`` audited texts of that class is predicted correctly
    (a model that never gets a class right). The trust stage (and connections) are then skipped with this reason.

    >>> from types import SimpleNamespace
    >>> clf = SimpleNamespace(name="my/model", labels={0: "negative", 1: "positive"})
    >>> unlearnable_classes(clf, [0, 1, 1], [0, 0, 0], TrustOptions())
    ['positive']
    """
    if labels is None or options.train_texts is not None or demo_training(clf.name) is not None:
        return []
    pairs = list(zip(labels, predictions))[: options.train_limit]
    right = {int(y) for y, p in pairs if int(y) == int(p)}
    return [str(clf.labels[c]) for c in sorted(clf.labels) if c not in right]


def shortcut_candidates(examples, texts, class_names: dict, k: int, n_examples: int, min_texts: int = 3) -> list[dict]:
    """Words that carry untrustworthy correct predictions while unrelated to their class, ranked by how many
    predictions' worth of importance rests on them (each prediction's unrelated top words, by their share of
    its top-k importance), with the predictions they carry. A candidate needs at least ``min_texts`` distinct
    texts (``n_predictions``; a word twice in one text counts once): one prediction is no shortcut."""
    weight, where = {}, {}
    for i, e in enumerate(examples):
        if e["label"] is not False:
            continue
        total = sum(s for _, s, _ in e["top_words"]) or 1.0
        for w, s, related in e["top_words"]:
            if related or not toki.can_be_keyword(w):   # punctuation and stop words are not shortcuts
                continue
            key = (w, int(e["predicted"]))
            weight[key] = weight.get(key, 0.0) + s / total
            where.setdefault(key, {})[i] = None   # distinct texts, in order
    count = {key: len(v) for key, v in where.items()}
    kept = [key for key in weight if count[key] >= min_texts]
    ranked = sorted(kept, key=lambda key: (-weight[key], -count[key], key[0]))[:k]
    return [{"word": w, "class": class_names[c], "class_index": c, "weight": float(weight[(w, c)]),
             "n_predictions": count[(w, c)], "examples": [{"index": i, "text": texts[i]} for i in list(where[(w, c)])[:n_examples]]}
            for w, c in ranked]


def function_word_share(examples) -> dict:
    """The documented departure, measured: TOKI (as the paper) counts function words and punctuation among the
    unrelated words an explanation rests on. Over the untrustworthy verdicts: the share of their unrelated
    importance such words carry, and how many verdicts would turn trustworthy without them (Eq. 6 on the rest)."""
    from textxai.toki.core import importance_sums

    untrusted = [e for e in examples if e["label"] is False]
    unrelated = function = 0.0
    turn = 0
    for e in untrusted:
        for w, s, related in e["top_words"]:
            if not related:
                unrelated += s
                function += 0.0 if toki.can_be_keyword(w) else s
        rest = [(s, r) for w, s, r in e["top_words"] if r or toki.can_be_keyword(w)]
        if rest:
            is_rel, is_unr = importance_sums([s for s, _ in rest], [float(r) for _, r in rest])
            turn += bool(is_rel >= is_unr and is_rel > 0)
    share = function / unrelated if unrelated > 0 else float("nan")
    out = {"n_untrusted": len(untrusted), "share": share, "turn_trustworthy": turn}
    if untrusted and share == share and share >= 0.25:
        out["reading"] = (f"Function words and punctuation carry {share:.0%} of the unrelated importance of the "
                          f"{len(untrusted)} untrustworthy verdicts; without them {turn} of the {len(untrusted)} would be "
                          "trustworthy. TOKI counts them as unrelated (as the paper does: a documented departure from "
                          "reading them as shortcuts): such a verdict says the explanation rests on no class word, not "
                          "that the model found a shortcut.")
    return out


def index_domain_warning(clf, texts, source: str) -> str | None:
    """A warning when TOKI's keyword index is learnt from the demo model's packaged training texts while the audited
    texts come from other data: words of this data the index never met count as unrelated, so ordinary words of
    the domain become "shortcut candidates". None when the index comes from the audited texts or given ones."""
    if not source.startswith("the demo model's"):
        return None
    known = demo_knowledge(clf.name)
    outside = sum(t not in (known.domain if known else ()) for t in texts)
    if not outside:
        return None
    return (f"TOKI's keyword index is learnt from {source}, but {outside} of the {len(texts)} audited texts are not "
            "from the demo's data: its keywords may not cover this data's words (ordinary words of the domain then "
            "count as unrelated and can show up as shortcut candidates). Give training texts of this data: --train-data "
            "(with --label-column).")


def _agreement(examples, iv: nb.Intervals) -> dict:
    assessed = [e for e in examples if e["label"] is not None]
    out = {}
    for i, (a, name_a) in enumerate(VERDICTS):
        for b, name_b in VERDICTS[i + 1:]:
            same = [float(e[a] == e[b]) for e in assessed]
            out[f"{name_a} / {name_b}"] = nb.rate_estimate(same, iv, f"get the same verdict from {name_a} and {name_b}",
                                                           "assessed predictions")
    combos = {}
    for e in assessed:
        key = " ".join(f"{name}:{'yes' if e[v] else 'no'}" for v, name in VERDICTS)
        combos[key] = combos.get(key, 0) + 1
    out["table"] = dict(sorted(combos.items(), key=lambda kv: -kv[1]))
    return out


def _attack(clf, texts, references, examples, index, options: TrustOptions, iv: nb.Intervals, batch_size: int,
            precision: str = "float32") -> dict:
    chosen = [i for i, e in enumerate(examples) if e["label"] is not None][: options.attack_texts]
    if not chosen:
        return {"n_attacked": 0, "reading": "no correct prediction to attack."}
    sub, labs = [texts[i] for i in chosen], ClassIndices(int(references[i]) for i in chosen)
    attack = on_main(toki.toki_attack)  # its random stream and candidate cache run across the texts: not split
    runs = {s: attack(clf, sub, index, labels=labs, strategy=s, seed=iv.seed, max_rate=options.max_rate,
                                min_similarity=options.min_similarity, batch_size=batch_size, precision=precision)
            for s in ("toki", "random")}
    from textxai.audit.meaning import check_edit

    # a flip counts only when the edit keeps the meaning (textxai.audit.meaning: no antonym, no change of the
    # sentiment's strength, no ungrammatical swap); every flipping edit is listed with the check's verdict
    checked = {s: [check_edit(r.original, r.substitutions) if r.success else None for r in runs[s]["examples"]]
               for s in runs}
    success = {s: [float(bool(r.success) and c["kept"]) for r, c in zip(runs[s]["examples"], checked[s])] for s in runs}
    flips = {s: int(sum(bool(r.success) for r in runs[s]["examples"])) for s in runs}
    out = {"n_attacked": len(chosen), "indices": chosen,
           "toki": nb.rate_estimate(success["toki"], iv, "are flipped by the TOKI-guided attack with an edit that keeps "
                                    "the meaning", "attacked predictions"),
           "random": nb.rate_estimate(success["random"], iv, "are flipped by random substitution with an edit that keeps "
                                      "the meaning", "attacked predictions"),
           "difference": nb.difference(success["toki"], success["random"], iv, "attack success, TOKI-guided vs random",
                                       ("TOKI-guided", "random")),
           "queries": {s: runs[s]["avg_queries"] for s in runs},
           "flips": flips,
           "rejected": {s: int(sum(1 for c in checked[s] if c is not None and not c["kept"])) for s in runs},
           "edits": [{"strategy": s, "original": r.original, "adversarial": r.adversarial,
                      "substitutions": [list(x) for x in r.substitutions], "similarity": float(r.similarity),
                      "meaning_kept": c["kept"], "reasons": c["reasons"]}
                     for s in runs for r, c in zip(runs[s]["examples"], checked[s]) if r.success]}
    out["successes"] = [e for e in out["edits"] if e["strategy"] == "toki" and e["meaning_kept"]][:3]
    if any(out["rejected"].values()):
        out["meaning_note"] = (f"{out['rejected']['toki']} of {flips['toki']} TOKI-guided and {out['rejected']['random']} "
                               f"of {flips['random']} random flips changed the meaning (an antonym, the sentiment's "
                               "strength or an ungrammatical swap) and are not counted as successes.")
    return out


def _rates(results: dict, iv: nb.Intervals) -> dict:
    """The three trustworthy rates as TOKI's analysis gives them (its ``intervals`` entries and ``readings``,
    :func:`textxai.toki.analysis.rate_readings`); a rate without an entry (no verdict) read as an empty count."""
    from textxai import readings
    from textxai.toki.analysis import RATE_UNITS, RATES

    out = {}
    for key, name, what in RATES:
        entry = (results.get("intervals") or {}).get(key)
        if entry is None or key not in results.get("readings", {}):
            out[name] = readings.count_estimate([], what, RATE_UNITS, iv.confidence_level)
        else:
            out[name] = {**entry, "reading": results["readings"][key]}
    return out


def trust(clf, texts, labels, predictions, options: TrustOptions, iv: nb.Intervals, batch_size: int = 32,
          progress: bool = False, precision: str = "float32") -> dict:
    """TOKI on the audited texts: trust rate of correct predictions, the three verdicts and their agreement,
    shortcut candidates with examples, the TOKI attack against random substitution. ``precision``: of every
    explanation (the keyword index's and the audited texts') and of the attack."""
    # class indices, read again as indices (a model whose classes are named '1'..'5' reads an int as a name)
    references = ClassIndices(int(y) for y in (labels if labels is not None else predictions))
    index, source = keyword_index(clf, texts, references, options, batch_size, progress, precision)
    assessed = len(texts) if options.max_texts is None else min(options.max_texts, len(texts))
    analysis = toki.analyse(texts[:assessed], references[:assessed], model=clf, keyword_index=index,
                            explain=explain_options(options, batch_size, progress, precision), figures=False,
                            intervals={"confidence_level": iv.confidence_level, "n_resamples": iv.n_resamples,
                                       "seed": iv.seed, "sample_size_sweep": False})
    res = analysis.results   # the method's own analysis: its verdicts, its rates' intervals and readings
    keys = ("label", "reason", "predicted", "confidence", "is_rel", "is_unr", "naive", "no_ki")
    ex = [{k: e[k] for k in keys} | {"top_words": [[w, float(s), bool(r)] for w, s, r in e["top_words"]]}
          for e in res["examples"]]
    ex += [dict.fromkeys(keys) | {"reason": f"not assessed (trust.max_texts={options.max_texts})",   # one entry per
                                  "predicted": int(predictions[i]), "top_words": []}   # text: connections pairs them
           for i in range(assessed, len(texts))]
    of = "correct predictions" if labels is not None else "predictions (no labels: every prediction taken as correct)"
    if assessed < len(texts):
        of += f" of the first {assessed} texts (trust.max_texts)"
    out = {"index_source": source, "n_assessed": assessed, "n_correct": res["n_correct"], "n_undetermined": res["n_undetermined"],
           "keywords": {index.class_names[c]: index.keyword_list(c)[:20] for c in sorted(index.class_names)},
           "examples": ex, "rates": _rates(res, iv),
           "agreement": _agreement(ex, iv),
           "shortcuts": shortcut_candidates(ex, texts, index.class_names, options.shortcuts, options.shortcut_examples,
                                            options.shortcut_min_texts),
           "shortcut_min_texts": options.shortcut_min_texts,
           "function_words": function_word_share(ex)}
    warning = index_domain_warning(clf, texts, source)
    if warning:
        out["index_warning"] = warning
    out["untrusted"] = nb.rate_estimate([None if e["label"] is None else not e["label"] for e in ex], iv,
                                        "rest on words unrelated to their class", of)
    if options.attack_texts:
        out["attack"] = _attack(clf, texts, references, ex, index, options, iv, batch_size, precision)
    return out


def _without(text: str, word: str, clf, replacement: str | None) -> str | None:
    from textxai.words import word_spans

    spans = [(s, e) for w, s, e in word_spans(text, clf.word_tokenizer) if w.lower() == word]
    if not spans:
        return None
    for s, e in sorted(spans, reverse=True):
        text = text[:s] + (replacement or "") + text[e:]
    return " ".join(text.split())


def shortcut_flips(clf, texts, predictions, shortcuts, iv: nb.Intervals, batch_size: int = 32, top: int = 3) -> list[dict]:
    """Per top shortcut word: the predictions of its class on texts containing it, the word deleted and
    replaced by its 3 nearest meaning-keeping substitutes (the shared GloVe generator with ``keep_meaning=True``: no
    antonyms, bad -> good would flip a prediction for the right reason); a flip = any of them changes the label."""
    from textxai.editors import shared_generator

    gen = shared_generator(keep_meaning=True)
    out = []
    for cand in shortcuts[:top]:
        word, c = cand["word"], cand["class_index"]
        subs = [s for s, _ in gen(word, k=3)]
        rows = [(i, [_without(texts[i], word, clf, r) for r in [None, *subs]]) for i in range(len(texts))
                if predictions[i] == c]
        rows = [(i, edits) for i, edits in rows if edits[0] is not None]
        flat = [t for _, edits in rows for t in edits]
        pred = split(clf.predict_proba, over=("texts",))(flat, batch_size=batch_size).argmax(1) if flat else np.zeros(0, dtype=int)
        flips, pos = [], 0
        for _, edits in rows:
            flips.append(float((pred[pos:pos + len(edits)] != c).any()))
            pos += len(edits)
        out.append({"word": word, "class": cand["class"], "substitutes": subs, "n_texts": len(rows),
                    "flip_rate": nb.rate_estimate(flips, iv, f"flip when '{word}' is deleted or replaced",
                                                  f"'{cand['class']}' predictions containing it")})
    return out


def connections(clf, texts, difficulty: dict, trust_result: dict, predictions, iv: nb.Intervals,
                batch_size: int = 32) -> dict:
    """Are the hardest examples the untrustworthy ones (rank correlation of log lambda_max with the unrelated
    share of the explanation, over the assessed predictions)? Do the shortcut words flip predictions?"""
    ex = trust_result["examples"]
    d = np.asarray(difficulty["difficulty"], dtype=np.float64)
    unrel = np.array([np.nan if e["label"] is None else e["is_unr"] / max(e["is_rel"] + e["is_unr"], 1e-12) for e in ex])
    out = {"hard_vs_untrusted": nb.correlation(np.log(np.maximum(d, 1e-300)), unrel, iv,
                                               "rank correlation of difficulty with the unrelated share of the explanation")}
    out["shortcut_flips"] = shortcut_flips(clf, texts, predictions, trust_result.get("shortcuts", []), iv, batch_size)
    return out
