"""Every module: loadable by name (editable install and wheel), docstring Examples run as doctests."""
import doctest
import functools
import importlib.util
import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import textxai
from test_toki_module import OPTS as TOKI_OPTIONS
from test_toki_pipeline import make_data, shortcut_clf  # noqa: F401  (fixture)
from textxai.modules import MODULE_NAMES, list_modules, module_path

ROOT = Path(__file__).resolve().parents[1]
PRESENT = list_modules()


def test_every_module_folder_in_the_repo_is_listed():
    in_repo = sorted(p.name for kind in ("metrics", "measurements") for p in (ROOT / kind).glob("*") if (p / f"{p.name}.py").is_file())
    assert in_repo == PRESENT
    assert set(PRESENT) <= set(MODULE_NAMES)


def test_unknown_module_name_lists_the_available_ones():
    with pytest.raises(ValueError, match=r"name='nope' is not a textxai module; expected one of \['ceval'"):
        textxai.load("nope")


def _module_script(name):
    path = module_path(name) / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"textxai_module_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", PRESENT)
def test_load_by_name_and_card(name):
    module = textxai.load(name)
    assert module.name == name or name in module.__class__.__name__.lower() or module.name
    card = (module_path(name) / "README.md").read_text()
    headings = [line.lstrip("#").strip() for line in card.splitlines() if line.startswith("##")]
    # evaluate's order: what it is, how to use it (first, short, runnable), its inputs and outputs, then the rest
    order = ("Description", "How to Use", "Inputs", "Output Values", "Values from Popular Papers", "Examples",
             "Intended Uses", "Limitations and Bias", "Citation", "Further References")
    positions = []
    for section in order:
        where = [i for i, h in enumerate(headings) if h.endswith(section)]
        assert where, f"{name} card misses the section {section!r}"
        positions.append(where[0])
    assert positions == sorted(positions), f"{name} card: sections out of order {[headings[i] for i in positions]}"
    # at most ~800 words of prose (code blocks and tables of the paper's values not counted): the rest is on the site
    body = re.sub(r"^```.*?^```", "", card.split("\n---\n", 1)[1], flags=re.S | re.M)
    words = len("\n".join(line for line in body.splitlines() if not line.lstrip().startswith("|")).split())
    assert words <= 800, f"{name} card has {words} words of prose; move details to docs/methods/{name}.md"
    assert f"docs/methods/{name}.md" in card, f"{name} card does not link its page of the documentation site"


@pytest.mark.parametrize("name", PRESENT)
def test_module_docstring_examples(name):
    script = _module_script(name)
    parser = doctest.DocTestParser()
    test = parser.get_doctest(script._KWARGS_DESCRIPTION, {"textxai": textxai}, f"{name}._KWARGS_DESCRIPTION", None, 0)
    assert len(test.examples) >= 2, f"{name}: its Examples need at least 2 statements"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0, f"{name}: {runner.failures} failing example(s) (see output above)"


@pytest.mark.long
def test_load_from_a_built_wheel(tmp_path):
    wheel_dir, target = tmp_path / "wheel", tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(wheel_dir), str(ROOT)],
                   check=True, capture_output=True)
    wheel = next(wheel_dir.glob("textxai-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, capture_output=True)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import textxai, evaluate\n"
        "assert textxai.__file__.startswith(sys.argv[1]), textxai.__file__\n"
        "names = textxai.list_modules(); print(','.join(names))\n"
        "for n in names:\n"
        "    assert str(textxai.module_path(n)).startswith(sys.argv[1]); textxai.load(n)\n"
    )
    env = dict(os.environ)
    done = subprocess.run([sys.executable, "-c", code, str(target)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().split(",") == PRESENT if PRESENT else done.stdout.strip() == ""
    assert (target / "textxai" / "demo" / "data" / "sentiment.jsonl").is_file()


# ------------------------------------------------------------------ one input contract for every module (textxai.module_base)

TEXTS = ["the movie was wonderful", "i hated it !", "not good", "a terrible boring film", "good"]
PAIRS = ["it was good", "bad", "the film", "i hated it", "not good"]


def _naopc_columns(clf):
    words = [clf.words(t, p) for t, p in zip(TEXTS, PAIRS)]
    plain = [clf.words(t) for t in TEXTS]
    return {"texts": TEXTS, "text_pairs": PAIRS}, {
        # attributions depend on the words, so on whether the pairs are given
        ("attributions", True): [[(-1) ** j * (j + 1) / 10 for j in range(len(w))] for w in words],
        ("attributions", False): [[(-1) ** j * (j + 1) / 10 for j in range(len(w))] for w in plain],
    }


def _clf(name, request):
    return request.getfixturevalue("shortcut_clf" if name == "toki_trust" else "bert_clf")


def _case(name, clf):
    """(every column with its full values, the optional column groups, options for a set of given groups, extra)."""
    if name == "naopc":
        base, attributions = _naopc_columns(clf)

        def options(given):
            return dict(model=clf, normalization="exact", **({} if "attributions" in given else
                                                              {"attribution_method": "omission"}))
        return base, OPTIONAL[name], options, attributions
    if name == "fim_difficulty":
        return {"texts": TEXTS, "text_pairs": PAIRS}, OPTIONAL[name], lambda given: dict(model=clf), None
    if name == "inconsistency":
        chains = [["a b c", "a x c", "a b c d"], ["a b", "a c", None], ["x y z", "x y", "x", "y"], ["p q", "p r"],
                  ["m n o", "m n p", "q n p", "q"]]
        labels = [[0, 1, 0], [1, 0, None], [0, 0, 1, 1], [1, 1], [0, 1, 1, 0]]
        return {"edits": chains, "labels": labels}, OPTIONAL[name], lambda given: dict(n=[1, 2, 3]), None
    if name == "ceval":
        predictions = ["the movie was awful", ["i loved it !", "i liked it !"], None, "a wonderful boring film", "-1"]
        probs = np.array([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.4, 0.6], [0.5, 0.5]])
        cf_probs = np.array([[0.3, 0.7], [0.6, 0.4], [0.7, 0.3], [0.5, 0.5], [0.5, 0.5]])
        columns = {"predictions": predictions, "references": TEXTS, "reference_pairs": PAIRS,
                   "prediction_pairs": ["it was bad", ["good", "fine"], "x", "i liked it", None]}
        return columns, OPTIONAL[name], \
            lambda given: dict(original_probs=probs, counterfactual_probs=cf_probs, return_per_example=True), None
    if name == "toki_trust":  # clf: the 3-class shortcut classifier of test_toki_pipeline
        train, train_labels = make_data(12, seed=2)
        texts, references = make_data(5, seed=7)
        references[1] = (references[1] + 1) % 3  # one wrong prediction: no trust label
        return {"texts": texts, "references": references, "text_pairs": ["the night"] * 5}, OPTIONAL[name], \
            lambda given: dict(model=clf, train_texts=train, train_labels=train_labels, **TOKI_OPTIONS), None
    raise AssertionError(name)


def _given_columns(name, clf, groups):
    columns, optional, options, extra = _case(name, clf)
    dropped = {c for group in optional if group not in groups for c in group}
    out = {k: v for k, v in columns.items() if k not in dropped}
    if extra:  # naopc: attributions to match the words with / without pairs
        if ("attributions",) in groups:
            out["attributions"] = extra[("attributions", ("text_pairs",) in groups)]
    return out, options({c for group in groups for c in group})


def _same(a, b):
    dump = functools.partial(json.dumps, sort_keys=True, default=lambda o: np.asarray(o).tolist())
    assert dump(a) == dump(b)


_LOADED: dict = {}


def _module(name):
    if name not in _LOADED:
        _LOADED[name] = textxai.load(name)
    return _LOADED[name]


OPTIONAL = {"naopc": [("text_pairs",), ("attributions",)], "fim_difficulty": [("text_pairs",)],
            "inconsistency": [("labels",)], "ceval": [("prediction_pairs", "reference_pairs")],
            "toki_trust": [("text_pairs",)]}


def _subsets(name):
    optional = OPTIONAL[name]
    return [tuple(c) for r in range(len(optional) + 1) for c in itertools.combinations(optional, r)]


CONTRACT = [(name, groups) for name in PRESENT for groups in _subsets(name)]


@pytest.mark.parametrize("name, groups", CONTRACT, ids=[f"{n}-{'+'.join(c for g in gs for c in g) or 'required'}" for n, gs in CONTRACT])
def test_add_add_batch_and_compute_agree(name, groups, request):
    """Every module: compute(all) == add_batch in uneven batches then compute == add one by one then compute."""
    module = _module(name)
    columns, options = _given_columns(name, _clf(name, request), groups)
    whole = module.compute(**columns, **options)
    n = len(next(iter(columns.values())))
    for lo, hi in ((0, 1), (1, 3), (3, n)):
        module.add_batch(**{k: v[lo:hi] for k, v in columns.items()})
    _same(module.compute(**options), whole)
    singular = {"predictions": "prediction", "references": "reference"}
    for i in range(n):
        module.add(**{singular.get(k, k): v[i] for k, v in columns.items()})
    _same(module.compute(**options), whole)
    # the last batch given to compute itself joins the added ones
    module.add_batch(**{k: v[:2] for k, v in columns.items()})
    _same(module.compute(**{k: v[2:] for k, v in columns.items()}, **options), whole)
    if groups:  # the optional columns only matter when given: leaving them out gives another answer
        bare, bare_options = _given_columns(name, _clf(name, request), ())
        assert json.dumps(module.compute(**bare, **bare_options), sort_keys=True, default=str) != \
            json.dumps(whole, sort_keys=True, default=str)


BAD_OPTION = {"naopc": dict(normalization="bogus"), "fim_difficulty": dict(batch_size=0),
              "inconsistency": dict(pooling="bogus"), "ceval": dict(contrast="bogus"),
              "toki_trust": dict(explainer="bogus")}


@pytest.mark.parametrize("name", PRESENT)
def test_failed_compute_leaves_the_instance_usable(name, request):
    module = _module(name)
    groups = _subsets(name)[-1]  # every optional column given (the case that used to poison the instance)
    columns, options = _given_columns(name, _clf(name, request), groups)
    bare, bare_options = _given_columns(name, _clf(name, request), ())
    expected = module.compute(**bare, **bare_options)
    with pytest.raises((ValueError, TypeError)):  # fails inside the library, after the columns were stored
        module.compute(**columns, **{**options, **BAD_OPTION[name]})
    _same(module.compute(**bare, **bare_options), expected)
    # accumulated batches, then a failing compute: the instance is empty again, nothing leaks into the next call
    module.add_batch(**{k: v[:2] for k, v in columns.items()})
    with pytest.raises((ValueError, TypeError)):
        module.compute(**{**options, **BAD_OPTION[name]})
    with pytest.raises(ValueError, match="nothing to compute"):
        module.compute(**bare_options)
    # a column of the wrong type fails before anything is stored
    first = next(iter(bare))
    with pytest.raises(TypeError, match=rf"{first}\[1\]=7 \(int\)"):
        module.compute(**{**bare, first: [bare[first][0], 7, *bare[first][2:]]}, **bare_options)
    _same(module.compute(**bare, **bare_options), expected)


@pytest.mark.parametrize("name", PRESENT)
def test_a_string_is_not_a_list_of_examples(name, request):
    module = _module(name)
    bare, options = _given_columns(name, _clf(name, request), ())
    first = next(iter(bare))
    for call in (module.compute, module.add_batch):
        with pytest.raises(TypeError, match=rf"{first}='great' \(str\): expected a list with one item per example"):
            call(**{**bare, first: "great"}, **(options if call == module.compute else {}))
    other = [c for c in bare if c != first]
    if other:  # unequal lengths
        with pytest.raises(ValueError, match=rf"{other[0]} has 1 items but {first} has {len(bare[first])}"):
            module.add_batch(**{**bare, other[0]: bare[other[0]][:1]})
    with pytest.raises(ValueError, match=rf"{first}=None: expected a list"):
        module.add_batch(**{k: v for k, v in bare.items() if k != first} or {"predictions": None, "references": None})
    with pytest.raises(TypeError, match=r"not_an_option=1: not an option of"):
        module.compute(**bare, not_an_option=1)
    with pytest.raises(ValueError, match=r"not_a_column=...\): not a column of"):
        module.add_batch(**bare, not_a_column=[1])
    assert len(module) == 0  # nothing was stored by the refused calls


def test_confidence_intervals_through_compute(bert_clf):
    """compute(confidence_level=...) hands the result (with the per-example values it needs) to textxai.stats."""
    stats = pytest.importorskip("textxai.stats")
    module = _module("inconsistency")
    columns, options = _given_columns("inconsistency", bert_clf, OPTIONAL["inconsistency"])
    plain = module.compute(**columns, **options)
    out = module.compute(**columns, **options, confidence_level=0.9, n_resamples=999, seed=3)
    assert "per_example" not in out and {k: v for k, v in out.items() if k != "intervals"} == plain
    direct = stats.add_intervals("inconsistency", module.compute(**columns, **options, return_per_example=True),
                                 confidence_level=0.9, n_resamples=999, seed=3)
    assert out["intervals"] == direct["intervals"] and out["intervals"]
    with pytest.raises(ValueError, match=r"confidence_level=1.5: expected a number strictly between 0 and 1"):
        module.compute(**columns, **options, confidence_level=1.5)
    assert len(module) == 0


def _offline_env(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env.update(HF_HUB_OFFLINE="1", HF_EVALUATE_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               HF_HOME=str(tmp_path / "hf_home"), GRADIO_ANALYTICS_ENABLED="False")
    return env


_BY_HUB_NAME = (
    "import evaluate, sys\n"
    "m = evaluate.load(sys.argv[1])\n"
    "print(type(m).__name__, m.compute(edits=[['a b', 'a c', 'd e f']], n=[1])['inc@1'])\n"
)


@pytest.mark.long
def test_evaluate_load_by_hub_name_offline_after_cache_modules(tmp_path):
    """evaluate.load("textxai/inconsistency") offline from an empty folder: unknown before, found after caching."""
    empty = tmp_path / "empty"
    empty.mkdir()
    env = _offline_env(tmp_path)
    run = functools.partial(subprocess.run, capture_output=True, text=True, env=env, cwd=empty, timeout=300)
    before = run([sys.executable, "-c", _BY_HUB_NAME, "textxai/inconsistency"])
    assert before.returncode != 0 and "doesn't exist on the Hugging Face Hub" in before.stderr
    cached = run([sys.executable, "-m", "textxai", "cache-modules", "inconsistency", "naopc", "--namespace", "my-org"])
    assert cached.returncode == 0, cached.stderr
    assert [line.split()[0] for line in cached.stdout.splitlines()] == ["my-org/inconsistency", "my-org/naopc"]
    after = run([sys.executable, "-c", _BY_HUB_NAME, "my-org/inconsistency"])
    assert after.returncode == 0 and after.stdout.split() == ["Inconsistency", "2.0"], after.stderr[-2000:]
    # textxai.load caches the module it loads under the default namespace
    loaded = run([sys.executable, "-c", "import textxai; textxai.load('inconsistency')"])
    assert loaded.returncode == 0, loaded.stderr
    after = run([sys.executable, "-c", _BY_HUB_NAME, "textxai/inconsistency"])
    assert after.returncode == 0 and after.stdout.split() == ["Inconsistency", "2.0"], after.stderr[-2000:]
    assert not any(empty.iterdir())  # nothing was written into the working folder


@pytest.mark.parametrize("name", PRESENT)
def test_module_info_and_card_point_to_the_paper(name):
    info = textxai.load(name).info
    assert info.homepage.startswith("https://") and info.license == "Apache-2.0"
    card = (module_path(name) / "README.md").read_text()
    refs = card.split("## Further References", 1)
    assert len(refs) == 2 and "https://" in refs[1], f"{name}: the card needs a 'Further References' section with links"


# The cards' code blocks run in tests/test_docs.py (with README.md and the documentation site's pages).
