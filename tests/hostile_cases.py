"""The table of bad inputs shared by tests/test_hostile_table.py and the re-measurement in the closing note.

Each case: (case id, surface, call(ctx), the argument its message must name). ``ctx`` holds a tiny model
folder, loaded modules and Space apps (see ``Context``). A case is *clear* when the call raises a
ValueError / TypeError whose message names the argument.
"""
from __future__ import annotations

import numpy as np


class Context:
    def __init__(self, folder: str, modules: dict, apps: dict, tmp):
        self.folder, self.modules, self.apps, self.tmp = folder, modules, apps, tmp
        self._variants: dict = {}

    def module(self, name):
        return self.modules[name]

    def app(self, name):
        """The Space app ``name`` (loaded once, on first use)."""
        if name not in self.apps:
            from helpers import load_space_app

            self.apps[name] = load_space_app(name)
        return self.apps[name]

    def variant(self, name: str) -> str:
        """A folder holding the tiny classifier as a user may have it (see ``VARIANTS``), built on first use."""
        if name not in self._variants:
            import shutil
            from pathlib import Path

            target = Path(self.tmp) / f"variant-{name}"
            shutil.copytree(self.folder, target, dirs_exist_ok=True)
            VARIANTS[name](target)
            self._variants[name] = str(target)
        return self._variants[name]


def _config(folder, **changes):
    import json

    config = json.loads((folder / "config.json").read_text())
    config.update(changes)
    (folder / "config.json").write_text(json.dumps(config))


def _weights(folder, change):
    from safetensors.torch import load_file, save_file

    weights = load_file(folder / "model.safetensors")
    change(weights)
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})


def _one_output(folder):  # a regression head: one output, problem_type unset (transformers' rule: regression)
    _weights(folder, lambda w: w.update({"classifier.weight": w["classifier.weight"][:1].clone(),
                                         "classifier.bias": w["classifier.bias"][:1].clone()}))
    _config(folder, id2label={"0": "LABEL_0"}, label2id={"LABEL_0": 0}, problem_type=None)


def _truncate(path, keep: float = 0.5):
    import os

    os.truncate(path, int(os.path.getsize(path) * keep))


def _no_vocabulary(folder):
    for name in ("tokenizer.json", "vocab.txt"):
        (folder / name).unlink(missing_ok=True)


def _missing_shard(folder):
    import json

    (folder / "model.safetensors").rename(folder / "model-00001-of-00002.safetensors")
    index = {"metadata": {}, "weight_map": {"classifier.weight": "model-00002-of-00002.safetensors"}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))


VARIANTS = {
    "multi_label": lambda f: _config(f, problem_type="multi_label_classification"),
    "regression": lambda f: _config(f, problem_type="regression"),
    "one_output": _one_output,
    "odd_problem_type": lambda f: _config(f, problem_type="token_classification"),
    "nan": lambda f: _weights(f, lambda w: w["classifier.weight"].fill_(float("nan"))),
    "inf": lambda f: _weights(f, lambda w: w["classifier.bias"].fill_(float("inf"))),
    "nan_inside": lambda f: _weights(f, lambda w: w["bert.encoder.layer.0.output.dense.weight"].fill_(float("nan"))),
    "no_vocabulary": _no_vocabulary,
    "truncated_weights": lambda f: _truncate(f / "model.safetensors"),
    "empty_weights": lambda f: (f / "model.safetensors").write_bytes(b""),
    "garbage_weights": lambda f: (f / "model.safetensors").write_bytes(b"\xff" * 4096),
    "no_weights": lambda f: (f / "model.safetensors").unlink(),
    "missing_shard": _missing_shard,
    "no_config": lambda f: (f / "config.json").unlink(),
    "broken_config": lambda f: _truncate(f / "config.json"),
    "broken_tokenizer": lambda f: _truncate(f / "tokenizer.json", 0.3),
}


def _lib_cases():
    from textxai import ceval, fim, inconsistency, naopc, toki
    from textxai.attribution import word_attributions
    from textxai.classifier import TextClassifier, as_classifier
    from textxai.lm import CausalLM, perplexity

    M = lambda c: c.folder  # noqa: E731
    return [
        ("as_classifier(None)", "library", lambda c: as_classifier(None), "model"),
        ("as_classifier('')", "library", lambda c: as_classifier(""), "model"),
        ("as_classifier(' ')", "library", lambda c: TextClassifier(" "), "model"),
        ("as_classifier(42)", "library", lambda c: TextClassifier(42), "model"),
        ("as_classifier('../x')", "library", lambda c: as_classifier("../no-such"), "model"),
        ("device='tpu'", "library", lambda c: TextClassifier(M(c), device="tpu"), "device"),
        ("device='cuda:7'", "library", lambda c: TextClassifier(M(c), device="cuda:7"), "device"),
        ("max_length=0", "library", lambda c: TextClassifier(M(c), max_length=0), "max_length"),
        ("max_length=-3", "library", lambda c: TextClassifier(M(c), max_length=-3), "max_length"),
        ("word_tokenizer='x'", "library", lambda c: TextClassifier(M(c), word_tokenizer="x"), "word_tokenizer"),
        ("predict_proba('text')", "library", lambda c: as_classifier(M(c)).predict_proba("great"), "texts"),
        ("predict_proba([])", "library", lambda c: as_classifier(M(c)).predict_proba([]), "texts"),
        ("predict_proba([None])", "library", lambda c: as_classifier(M(c)).predict_proba([None]), "texts[0]"),
        ("predict_proba pairs len", "library", lambda c: as_classifier(M(c)).predict_proba(["a", "b"], ["c"]), "text_pairs"),
        ("predict_proba batch 0", "library", lambda c: as_classifier(M(c)).predict_proba(["a"], batch_size=0), "batch_size"),
        ("masked_proba bad mask", "library", lambda c: as_classifier(M(c)).masked_proba("a b", [[1, 0, 1]]), "masks"),
        ("masked_proba perturbation", "library",
         lambda c: as_classifier(M(c)).masked_proba("a b", [[1, 0]], perturbation="blur"), "perturbation"),
        ("lime precision='fp16'", "library",
         lambda c: word_attributions(["a b"], M(c), "lime", n_samples=20, precision="fp16"), "precision"),
        ("CausalLM(None)", "library", lambda c: CausalLM(None), "lm"),
        ("CausalLM('')", "library", lambda c: CausalLM(""), "lm"),
        ("perplexity('text')", "library", lambda c: perplexity("text", c.lm), "texts"),
        ("perplexity batch 0", "library", lambda c: perplexity(["a"], c.lm, batch_size=0), "batch_size"),
        ("ceval.flip_rate unequal", "library", lambda c: ceval.flip_rate([0, 1], [1]), "counterfactual_labels"),
        ("ceval.flips broadcast", "library", lambda c: ceval.flips([0, 0, 0], [1]), "counterfactual_labels"),
        ("ceval.token_distance None", "library", lambda c: ceval.token_distance(None, "x"), "original"),
        ("ceval.diversity []", "library", lambda c: ceval.diversity([]), "counterfactual_sets"),
        ("ceval.probability_change rows", "library",
         lambda c: ceval.probability_change([[0.5, 0.5], [0.5, 0.5]], [[0.2, 0.8]]), "counterfactual_probs"),
        ("ceval.judge 1 reply for 4", "library", lambda c: ceval.judge_quality(["a", "b", "c", "d"], lambda p: ["3"]), "judge"),
        ("ceval max_new_tokens=0", "library",
         lambda c: ceval.compute(["a"], ["b"], original_labels=[0], counterfactual_labels=[1],
                                               judge=lambda p: ["3"] * len(p), max_new_tokens=0), "max_new_tokens"),
        ("ceval targets=[7]", "library", lambda c: ceval.compute(["a"], ["b"], model=M(c), targets=[7]), "targets"),
        ("ceval labels out of range", "library",
         lambda c: ceval.compute(["a"], ["b"], model=M(c), original_labels=[9]), "original_labels"),
        ("naopc.aopc_curve nan", "library",
         lambda c: naopc.comprehensiveness_order([0.1, float("nan")]), "attributions"),
        ("naopc texts str", "library", lambda c: naopc.compute("great", [[0.1]], M(c)), "texts"),
        ("naopc beam 0", "library", lambda c: naopc.compute(["a b"], [[0.1, 0.2]], M(c), beam_size=0), "beam_size"),
        ("naopc attributions len", "library", lambda c: naopc.compute(["a b"], [[0.1]], M(c)), "attributions"),
        ("naopc normalization", "library", lambda c: naopc.compute(["a b"], [[0.1, 0.2]], M(c), normalization="x"),
         "normalization"),
        ("naopc target 7", "library", lambda c: naopc.compute(["a b"], [[0.1, 0.2]], M(c), target=7), "target"),
        ("fim texts str", "library", lambda c: fim.difficulty("great", M(c)), "texts"),
        ("fim texts []", "library", lambda c: fim.difficulty([], M(c)), "texts"),
        ("fim batch 0", "library", lambda c: fim.difficulty(["a"], M(c), batch_size=0), "batch_size"),
        ("fim pairs len", "library", lambda c: fim.difficulty(["a", "b"], M(c), text_pairs=["c"]), "text_pairs"),
        ("inc chains str", "library", lambda c: inconsistency.compute("a chain"), "chains"),
        ("inc chain with int", "library", lambda c: inconsistency.compute([["a b", 3]]), "chains"),
        ("inc n=0", "library", lambda c: inconsistency.compute([["a b", "a c"]], n=0), "n"),
        ("inc labels len", "library", lambda c: inconsistency.compute([["a b", "a c"]], labels=[[0]]), "labels"),
        ("inc pooling", "library", lambda c: inconsistency.compute([["a b", "a c"]], pooling="x"), "pooling"),
        ("toki texts str", "library", lambda c: toki.toki_trust("great", [0], model=M(c)), "texts"),
        ("toki references len", "library", lambda c: toki.toki_trust(["a", "b"], [0], model=M(c)), "references"),
        ("toki top_k 0", "library", lambda c: toki.toki_trust(["a"], [0], model=M(c), top_k=0), "top_k"),
        ("toki theta_dist 2", "library", lambda c: toki.toki_trust(["a"], [0], model=M(c), theta_dist=2.0), "theta_dist"),
        ("toki human_trust", "library",
         lambda c: toki.toki_trust(["a"], [0], model=M(c), train_texts=["a good film", "a bad film"], train_labels=[1, 0],
                                   human_trust=[5]), "human_trust"),
    ]


def _module_cases():
    M = lambda c: c.folder  # noqa: E731
    cases = []
    for name, kwargs in (
        ("naopc", {"texts": ["a good film"], "attributions": [[0.1, 0.2, 0.3]]}),
        ("fim_difficulty", {"texts": ["a good film"]}),
        ("toki_trust", {"texts": ["a good film"], "references": [1], "train_texts": ["a good film", "a bad film"],
                        "train_labels": [1, 0], "explainer": "omission", "embedders": "classifier"}),
        ("inconsistency", {"edits": [["a good film", "a bad film"]]}),
        ("ceval", {"predictions": ["a bad film"], "references": ["a good film"]}),
    ):
        first = next(iter(kwargs))
        cases += [
            (f"{name}: {first}=str", "module", lambda c, n=name, k=kwargs, f=first: c.module(n).compute(
                **{**k, f: "great"}, model=M(c)), first),
            (f"{name}: {first}=[]", "module", lambda c, n=name, k=kwargs, f=first: c.module(n).compute(
                **{**k, f: []}, model=M(c)), first),
            (f"{name}: {first}=None", "module", lambda c, n=name, k=kwargs, f=first: c.module(n).compute(
                **{**k, f: None}, model=M(c)), first),
            (f"{name}: {first}=[5]", "module", lambda c, n=name, k=kwargs, f=first: c.module(n).compute(
                **{**k, f: [5]}, model=M(c)), first),
            (f"{name}: model=None", "module", lambda c, n=name, k=kwargs: c.module(n).compute(**k, model=None)
             if n != "inconsistency" else c.module(n).compute(**k, model=None, lm=""), "model" if name != "inconsistency" else "lm"),
            (f"{name}: batch_size=0", "module", lambda c, n=name, k=kwargs: c.module(n).compute(**k, model=M(c), batch_size=0),
             "batch_size"),
            (f"{name}: device='tpu'", "module", lambda c, n=name, k=kwargs: c.module(n).compute(**k, model=M(c), device="tpu"),
             "device"),
        ]
    cases += [
        ("naopc: attributions len", "module",
         lambda c: c.module("naopc").compute(texts=["a good film"], attributions=[[0.1]], model=M(c)), "attributions"),
        ("naopc: beam_size=0", "module",
         lambda c: c.module("naopc").compute(texts=["a good film"], attributions=[[0.1, 0.2, 0.3]], model=M(c),
                                             beam_size=0), "beam_size"),
        ("ceval: targets=[7]", "module",
         lambda c: c.module("ceval").compute(predictions=["a"], references=["b"], model=M(c), targets=[7]), "targets"),
        ("ceval: contrast", "module",
         lambda c: c.module("ceval").compute(predictions=["a"], references=["b"], model=M(c), contrast="x"), "contrast"),
        ("inconsistency: n=0", "module",
         lambda c: c.module("inconsistency").compute(edits=[["a b", "a c"]], n=0), "n"),
        ("toki: top_k=0", "module",
         lambda c: c.module("toki_trust").compute(texts=["a"], references=[0], model=M(c), top_k=0), "top_k"),
    ]
    return cases


def _space_cases():
    from textxai import spaces

    return [
        ("space model None", "space", lambda c: spaces.resolve_model(None), "model"),
        ("space model path hosted", "space", lambda c: spaces.resolve_model("/etc/passwd", hosted=True), "model"),
        ("space model ../", "space", lambda c: spaces.resolve_model("../secret", hosted=True), "model"),
        ("space lm hosted path", "space", lambda c: spaces.resolve_lm("/tmp", listed=("gpt2",), hosted=True), "lm"),
        ("space texts none", "space", lambda c: spaces.check_inputs(["", " "]), "texts"),
        ("space texts too many", "space", lambda c: spaces.check_inputs(["a"] * 500), "texts"),
        ("space text too long", "space", lambda c: spaces.check_inputs(["a" * 10**5]), "texts[0]"),
        ("space texts int", "space", lambda c: spaces.check_inputs([3]), "texts[0]"),
        ("naopc space method", "space",
         lambda c: spaces.user_errors(c.apps["naopc"].evaluate_texts)(c.folder, "a film", "x", "auto", 5), "method"),
        ("naopc space beam", "space",
         lambda c: spaces.user_errors(c.apps["naopc"].evaluate_texts)(c.folder, "a film", "gradient", "auto", 99),
         "beam_size"),
        ("naopc space budget", "space",
         lambda c: spaces.user_errors(c.apps["naopc"].evaluate_texts)(c.folder, "\n".join(["a b c d e f g h i j k l"] * 5),
                                                                     "lime", "auto", 5), "texts"),
        ("ceval space no cfs", "space",
         lambda c: spaces.user_errors(c.apps["ceval"].score_one)(c.folder, "a film", "", "none"), "counterfactuals"),
        ("ceval space lm path", "space",
         lambda c: spaces.user_errors(c.apps["ceval"].score_one)(c.folder, "a film", "b film", "../x"), "lm"),
        ("ceval space csv none", "space",
         lambda c: spaces.user_errors(c.apps["ceval"].score_csv)(c.folder, None, "none"), "csv"),
        ("inc space steps", "space",
         lambda c: spaces.user_errors(c.apps["inconsistency"].run_editor)(c.folder, "a film", 99, "1", "spacy", "pooled",
                                                                          progress=lambda *a, **k: None), "steps"),
        ("inc space n", "space",
         lambda c: spaces.user_errors(c.apps["inconsistency"].score_chains)("a b\na c", "zero", "spacy", "pooled"), "n"),
    ]


def _upload(c, name: str, content: bytes, size: int | None = None) -> str:
    """A file the visitor uploads (``size``: a sparse file of that many bytes)."""
    path = c.tmp / name
    path.write_bytes(content)
    if size is not None:
        with open(path, "r+b") as handle:
            handle.truncate(size)
    return str(path)


def _space_strict_cases():
    """Issue 22: numbers through the API, invisible texts, pasted and uploaded sizes, broken uploads."""
    from textxai import spaces

    E = spaces.user_errors  # noqa: N806
    quiet = {"progress": lambda *a, **k: None}
    beam = lambda v: lambda c: E(c.app("naopc").evaluate_texts)(c.folder, "a fine film", "omission", "auto", v)  # noqa: E731
    steps = lambda v: lambda c: E(c.app("inconsistency").run_editor)(c.folder, "a fine film", v, "1", "whitespace",  # noqa: E731
                                                                     "pooled", **quiet)
    attack = lambda r, s: lambda c: E(c.app("toki_trust").attack_text)(c.folder, "a fine film", "", "omission",  # noqa: E731
                                                                       ["minilm"], r, s)
    push = lambda v: lambda c: E(c.app("fim_difficulty").push)(c.folder, "a fine film", v)  # noqa: E731
    csv_of = lambda name, content, size=None: lambda c: E(c.app("ceval").score_csv)(  # noqa: E731
        c.folder, _upload(c, name, content, size), "none")
    huge = "a fine film\n" * 60_000
    cases = [(f"naopc space beam {v!r}", "space", beam(v), "beam_size")
             for v in ("abc", float("nan"), float("inf"), 1e30, 2.7, -1, True, None)]
    cases += [(f"inc space steps {v!r}", "space", steps(v), "steps") for v in ("abc", 2.7, float("nan"), 1e30)]
    cases += [(f"toki space max_rate {v!r}", "space", attack(v, 0.5), "max_rate") for v in ("abc", float("nan"), 7.0)]
    cases += [(f"toki space min_similarity {v!r}", "space", attack(0.2, v), "min_similarity")
              for v in (float("inf"), 1e30, "")]
    cases += [(f"fim space strength {v!r}", "space", push(v), "strength") for v in ("abc", float("nan"), -1.0, 1e30)]
    cases += [
        ("naopc space zero-width texts", "space",
         lambda c: E(c.app("naopc").evaluate_texts)(c.folder, "\u200b\u200d\n\ufeff", "omission"), "texts"),
        ("ceval space zero-width original", "space",
         lambda c: E(c.app("ceval").score_one)(c.folder, "\u200b \u2060", "a fine film", "none"), "original"),
        ("space texts one invisible", "space", lambda c: spaces.check_inputs(["a film", "\u3164"]), "texts[1]"),
        ("naopc space pasted 720k chars", "space",
         lambda c: E(c.app("naopc").evaluate_texts)(c.folder, huge, "omission"), "texts"),
        ("inc space pasted chains 720k", "space",
         lambda c: E(c.app("inconsistency").score_chains)(huge, "1", "whitespace", "pooled"), "chains"),
        ("toki space pasted training 720k", "space",
         lambda c: c.app("toki_trust").parse_train("1\t" + huge, None), "training texts"),
        ("toki space embedders unknown", "space", lambda c: c.app("toki_trust").settings("omission", ["glove300"]),
         "embedders"),
        ("inc space n '1e30'", "space", lambda c: c.app("inconsistency").parse_n("1e30"), "n"),
        ("inc space n 'nan'", "space", lambda c: c.app("inconsistency").parse_n("nan"), "n"),
        ("space model zero-width", "space", lambda c: spaces.resolve_model("\u200b", hosted=True), "model"),
        ("ceval space csv 82 MB", "space", csv_of("big.csv", b"orig_text,gen_text\n", 82_000_000), "csv"),
        ("ceval space csv duplicated header", "space", csv_of("dup.csv", b"orig_text,gen_text,gen_text\na,b,c\n"), "csv"),
        ("ceval space csv 5000 rows", "space", csv_of("rows.csv", b"orig_text,gen_text\n" + b"a,b\n" * 5000), "csv"),
        ("ceval space csv latin-1", "space", csv_of("latin.csv", "orig_text,gen_text\ncaf\u00e9,b\n".encode("latin-1")),
         "csv"),
        ("ceval space csv empty", "space", csv_of("empty.csv", b""), "csv"),
        ("ceval space csv utf-16 without BOM", "space",
         csv_of("u16.csv", "orig_text,gen_text\na,b\n".encode("utf-16-le")), "csv"),
        ("ceval space csv unterminated quote", "space", csv_of("quote.csv", b'orig_text,gen_text\n"a,b\n'), "csv"),
        ("ceval space csv parquet garbage", "space", csv_of("fake.parquet", b"PAR1 nope"), "csv"),
        ("ceval space csv .exe", "space", csv_of("x.exe", b"MZ"), "csv"),
    ]
    return cases


def _fault_cases():
    """Issue 22: the models, folders and texts users bring, on the library and the modules."""
    from textxai import ceval, fim, inconsistency, naopc, toki
    from textxai.attribution import word_attributions
    from textxai.classifier import TextClassifier, as_classifier
    from textxai.editors import DeletionEditor, SubstitutionEditor

    V = lambda name: lambda c: c.variant(name)  # noqa: E731
    text, attrs = ["the movie was great"], [[0.1, 0.2, 0.3, 0.4]]
    cases = []
    # folders that are not whole or not a classifier: refused when loading, naming the model
    for name in ("regression", "one_output", "odd_problem_type", "no_vocabulary", "truncated_weights", "empty_weights",
                 "garbage_weights", "no_weights", "missing_shard", "no_config", "broken_config", "broken_tokenizer"):
        cases.append((f"folder {name}: TextClassifier", "library", lambda c, v=V(name): TextClassifier(v(c)), "model"))
    for name in ("regression", "one_output", "no_vocabulary", "truncated_weights"):
        cases += [
            (f"folder {name}: naopc", "library", lambda c, v=V(name): naopc.compute(text, attrs, v(c)), "model"),
            (f"folder {name}: fim", "library", lambda c, v=V(name): fim.compute(text, v(c)), "model"),
            (f"folder {name}: naopc module", "module", lambda c, v=V(name): c.module("naopc").compute(
                texts=text, attributions=attrs, model=v(c)), "model"),
        ]
    # a diverged model (NaN / inf outputs): one clear error on every path, never a hang or a NaN summary
    nan_calls = {
        "predict_proba": lambda m: as_classifier(m).predict_proba(text),
        "masked_proba": lambda m: as_classifier(m).masked_proba(text[0], [[1, 0, 0, 0]]),
        "naopc exact": lambda m: naopc.compute(text, attrs, m, normalization="exact"),
        "naopc auto": lambda m: naopc.compute(text, attrs, m),
        "naopc beam": lambda m: naopc.compute(text, attrs, m, normalization="beam"),
        "naopc beam-paper": lambda m: naopc.compute(text, attrs, m, normalization="beam-paper"),
        "naopc none": lambda m: naopc.compute(text, attrs, m, normalization="none"),
        "naopc lime": lambda m: naopc.compute(text, None, m, attribution_method="lime"),
        "fim": lambda m: fim.compute(text, m),
        "fim min_flip": lambda m: fim.min_flip_strength(text, m),
        "fim random flips": lambda m: fim.random_substitution_flip_rate(text, m, vocabulary=["film", "good"]),
        "gradient": lambda m: word_attributions(text, m, "gradient"),
        "integrated_gradients": lambda m: word_attributions(text, m, "integrated_gradients"),
        "kernel_shap": lambda m: word_attributions(text, m, "kernel_shap", n_samples=20),
        "omission": lambda m: word_attributions(text, m, "omission"),
        "ceval": lambda m: ceval.compute(["a good film"], ["a bad film"], model=m),
        "inconsistency": lambda m: inconsistency.compute([["a good film", "a bad film"]], model=m),
        "deletion editor": lambda m: DeletionEditor(m)(["the movie was great"]),
    }
    for call_name, call in nan_calls.items():
        cases.append((f"nan model: {call_name}", "library", lambda c, f=call: f(c.variant("nan")), "model"))
    for call_name in ("predict_proba", "naopc exact", "fim"):
        cases.append((f"inf model: {call_name}", "library", lambda c, f=nan_calls[call_name]: f(c.variant("inf")), "model"))
        cases.append((f"nan inside the encoder: {call_name}", "library",
                      lambda c, f=nan_calls[call_name]: f(c.variant("nan_inside")), "model"))
    # multi-label heads where a method needs exclusive classes
    multi = {
        "fim": lambda m: fim.compute(text, m),
        "fim difficulty": lambda m: fim.difficulty(text, m),
        "ceval": lambda m: ceval.compute(["a good film"], ["a bad film"], model=m),
        "toki": lambda m: toki.toki_trust(text, [0], model=m),
        "deletion editor": lambda m: DeletionEditor(m),
        "substitution editor": lambda m: SubstitutionEditor(m),
        "inconsistency": lambda m: inconsistency.compute([["a good film", "a bad film"]], model=m),
    }
    for call_name, call in multi.items():
        cases.append((f"multi-label: {call_name}", "library", lambda c, f=call: f(c.variant("multi_label")), "model"))
    # sizes the model cannot take, an exact search too big to run, tokenizers that do not fit the model
    cases += [
        ("max_length > positions", "library", lambda c: TextClassifier(c.folder, max_length=10_000), "max_length"),
        ("naopc max_exact_words=64", "library", lambda c: naopc.compute(text, attrs, c.folder, max_exact_words=64),
         "max_exact_words"),
        ("naopc max_exact_words=21", "library",
         lambda c: naopc.compute(text, attrs, c.folder, normalization="exact", max_exact_words=21), "max_exact_words"),
        ("aopc_limits max_exact_words=40", "library",
         lambda c: naopc.aopc_limits(lambda m: np.zeros(len(m)), 40, method="exact", max_exact_words=40), "max_exact_words"),
        ("tokenizer of another model", "library",
         lambda c: TextClassifier(c.folder, tokenizer=_big_tokenizer(c)).predict_proba(["the food was lovely"]),
         "tokenizer"),
        ("naopc with another model's tokenizer", "library",
         lambda c: naopc.compute(["the food was lovely"], [[0.1, 0.2, 0.3, 0.4]],
                                 TextClassifier(c.folder, tokenizer=_big_tokenizer(c))), "tokenizer"),
    ]
    # lone surrogates (half an emoji): tokenizers cannot encode them
    cases += [
        ("predict_proba lone surrogate", "library", lambda c: as_classifier(c.folder).predict_proba(["good \ud83d film"]),
         "texts[0]"),
        ("naopc lone surrogate", "library", lambda c: naopc.compute(["a", "\udfff"], [[0.1], [0.1]], c.folder), "texts[1]"),
        ("fim lone surrogate pair", "library",
         lambda c: fim.compute(["a film"], c.folder, text_pairs=["\ud800 x"]), "text_pairs[0]"),
        ("naopc module lone surrogate", "module",
         lambda c: c.module("naopc").compute(texts=["\ud800"], attributions=[[0.1]], model=c.folder), "texts[0]"),
    ]
    # loaded objects whose head is not a sequence classifier's, or disagrees with its config
    cases += [
        ("token-classification model object", "library",
         lambda c: TextClassifier(_token_classifier(c), tokenizer=c.folder).predict_proba(text), "model"),
        ("config num_labels != head", "library",
         lambda c: TextClassifier(_relabelled(c), tokenizer=c.folder).predict_proba(text), "model"),
    ]
    # texts of invisible characters only: no word the model sees
    for label, odd in (("zero-width", "\u200b\u200b"), ("BOM + word joiner", "\ufeff\u2060"), ("controls", "\x00\x01\x02")):
        cases += [
            (f"naopc text of {label}", "library", lambda c, t=odd: naopc.compute([t], [[0.1]], c.folder), "texts[0]"),
            (f"fim text of {label}", "library", lambda c, t=odd: fim.compute([t], c.folder), "texts[0]"),
        ]
    # the same through the evaluate modules
    mods = {
        "naopc": lambda c, m: c.module("naopc").compute(texts=text, attributions=attrs, model=m),
        "fim_difficulty": lambda c, m: c.module("fim_difficulty").compute(texts=text, model=m),
        "ceval": lambda c, m: c.module("ceval").compute(predictions=["a bad film"], references=["a good film"], model=m),
        "toki_trust": lambda c, m: c.module("toki_trust").compute(texts=text, references=[1], model=m,
                                                                  train_texts=["a good film", "a bad film"],
                                                                  train_labels=[1, 0], explainer="omission",
                                                                  embedders="classifier"),
        "inconsistency": lambda c, m: c.module("inconsistency").compute(edits=[["a good film", "a bad film"]], model=m),
    }
    for mod, call in mods.items():
        for name in ("nan", "regression") + (("multi_label",) if mod != "naopc" else ()):
            cases.append((f"{mod} module: {name} model", "module", lambda c, f=call, n=name: f(c, c.variant(n)), "model"))
    cases += [
        ("naopc module: max_exact_words=64", "module",
         lambda c: c.module("naopc").compute(texts=text, attributions=attrs, model=c.folder, max_exact_words=64),
         "max_exact_words"),
        ("fim module: zero-width text", "module",
         lambda c: c.module("fim_difficulty").compute(texts=["\u200b"], model=c.folder), "texts[0]"),
        ("naopc module: zero-width text", "module",
         lambda c: c.module("naopc").compute(texts=["\u200b\u200c"], attributions=[[0.1, 0.2]], model=c.folder),
         "texts[0]"),
    ]
    return cases


def _token_classifier(ctx):
    """The tiny BERT's body under a token-classification head (logits per token)."""
    from transformers import BertForTokenClassification
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # no load report of the unused pooler on stdout
    try:
        return BertForTokenClassification.from_pretrained(ctx.folder)
    finally:
        hf_logging.set_verbosity(verbosity)


def _relabelled(ctx):
    """The tiny classifier (2 outputs) whose config claims 3 labels."""
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(ctx.folder)
    model.config.num_labels = 3
    return model


def _big_tokenizer(ctx):
    """A byte-level BPE tokenizer of ~300 ids: more than the tiny BERT's 50 embeddings."""
    import tiny_models
    from pathlib import Path

    return tiny_models.roberta_tokenizer(Path(ctx.tmp) / "big-tokenizer")


def all_cases():
    return _lib_cases() + _module_cases() + _space_cases() + _space_strict_cases() + _fault_cases()


def outcome(call, ctx, argument: str, timeout: float = 120.0) -> tuple[str, str]:
    """(clear | obscure | silent | hang, detail) of one case."""
    import threading
    import warnings

    box = {}

    def run():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                box["value"] = call(ctx)
        except BaseException as error:  # noqa: BLE001
            box["error"] = error

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        return "hang", ""
    if "error" not in box:
        return "silent", repr(box.get("value"))[:120]
    error = box["error"]
    message = str(error)
    if isinstance(error, (ValueError, TypeError)) and argument in message:
        return "clear", f"{type(error).__name__}: {message[:160]}"
    return "obscure", f"{type(error).__name__}: {message[:200]}"


_ = np
