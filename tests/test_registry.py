"""The method registry: the five built-in descriptors are consistent, and a sixth method registered from this test
(its own package, module folder and runner, all written into a temporary folder; nothing of textxai edited)
appears on every surface: ``textxai list``, ``textxai run``, the work estimate, the intervals and the training
callback. This file is the worked example of CONTRIBUTING.md's "Adding a method"."""
import argparse
import csv
import dataclasses
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import textxai
from textxai import cli, estimates, registry, stats
from textxai.integrations import CallbackInputs, TextxaiCallback
from textxai.modules import module_path

BUILT_IN = ["inconsistency", "fim_difficulty", "toki_trust", "naopc", "ceval"]


# ----------------------------------------------------------------------------- the five built-ins
def test_the_built_in_methods_in_their_order():
    assert registry.names()[:5] == BUILT_IN
    assert textxai.MODULE_NAMES == {"inconsistency": "metrics", "fim_difficulty": "measurements",
                                    "toki_trust": "metrics", "naopc": "metrics", "ceval": "metrics"}


def test_import_textxai_stays_light_and_module_names_are_read_on_access():
    code = ("import sys, textxai\n"
            "light = not any(m in sys.modules for m in ('torch', 'numpy', 'textxai.registry'))\n"
            "names = textxai.MODULE_NAMES\n"
            "print(light, sorted(names), 'textxai.registry' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split("\n")[0] == f"True {sorted(BUILT_IN)} True"


@pytest.mark.parametrize("name", BUILT_IN)
def test_built_in_descriptor_is_consistent(name):
    method = registry.get(name)
    folder = module_path(name)
    assert folder.name == name and folder.parent.name == method.folder_kind and (folder / f"{name}.py").is_file()
    glue = method.runner_module()
    assert callable(glue.add_arguments) and callable(glue.run)
    assert isinstance(method.unit, str) and method.unit
    assert callable(method.estimands) and callable(method.estimate)
    data_fields = {f.name for f in dataclasses.fields(CallbackInputs)}
    assert set(method.inputs.values()) <= data_fields and set(method.required) <= set(method.inputs.values())
    for group in method.option_groups.values():  # frozen dataclasses
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(group(), dataclasses.fields(group)[0].name, None)
    for flag in {flag for flags in method.flags.values() for flag in flags.split()}:  # flags it really has
        args = cli.build_parser().parse_args(["run", name, "--model", "m", "--data", "d", flag, "x"])
        assert getattr(args, flag[2:].replace("-", "_")) in ("x", ["x"])
    # one source of defaults: a runner argument named like a group field defaults to the field's default
    shared = method.option_defaults().keys() & method.argument_defaults().keys()
    as_list = lambda v: list(v) if isinstance(v, tuple) else v  # noqa: E731 - argparse takes nargs defaults as lists
    assert {k: as_list(method.argument_defaults()[k]) for k in shared} == \
        {k: as_list(method.option_defaults()[k]) for k in shared}


@pytest.mark.parametrize("name", BUILT_IN)
def test_built_in_estimate_grows_with_the_texts(name):
    method = registry.get(name)
    options = method.run_options({"judge": None, "lm": None})
    one, three = method.estimate([12], options), method.estimate([12, 12, 30], options)
    assert isinstance(one, int) and 0 < one < three


def test_a_descriptor_names_what_is_wrong():
    with pytest.raises(ValueError, match=r"kind='metrics': expected one of \['metric', 'measurement'\]"):
        registry.Method(name="x", kind="metrics", help="")
    with pytest.raises(ValueError, match=r"unit=3: expected what the bootstrap resamples"):
        registry.Method(name="x", kind="metric", help="", unit=3)
    with pytest.raises(TypeError, match=r"option_groups\['options'\]=<class 'dict'>: expected an option-group"):
        registry.Method(name="x", kind="metric", help="", option_groups={"options": dict})
    with pytest.raises(ValueError, match=r"method='nope' is not a textxai method"):
        registry.get("nope")


# ----------------------------------------------------------------------------- a sixth method, from here
PACKAGE = '''
"""stability: the share of single-word deletions (of the first ``max_words`` words) that keep a text's
predicted label. A tiny method: the algorithm and its one analysis."""
from dataclasses import dataclass

import numpy as np

from textxai.classifier import as_classifier
from textxai.registry import Analysis


@dataclass(frozen=True)
class StabilityOptions:
    max_words: int = 4
    batch_size: int = 32


def deletions(text, max_words):
    words = text.split()
    return [] if len(words) < 2 else [" ".join(words[:i] + words[i + 1:]) for i in range(min(len(words), max_words))]


def analyse(texts, classifier, options=StabilityOptions()):
    clf = as_classifier(classifier)
    per_text = []
    for text in texts:
        variants = deletions(text, options.max_words)
        labels = clf.predict([text] + variants, batch_size=options.batch_size)
        per_text.append(float(np.mean(labels[1:] == labels[0])) if variants else 1.0)
    summary = {"stability": float(np.mean(per_text)), "per_text": per_text}
    warnings = [f"only {len(texts)} texts: the interval is wide"] if len(texts) < 5 else []
    return Analysis("stability", dict(summary), summary, warnings, {}, f"stability: {summary['stability']:.3f}")
'''

RUNNER = '''
"""textxai run stability: argparse -> options -> analyse -> results."""
from stability_method import StabilityOptions, analyse
from textxai.validation import positive_int_arg


def add_arguments(parser):
    parser.add_argument("--max-words", type=positive_int_arg, default=StabilityOptions().max_words)


def run(args, texts, text_pairs, labels, classifier):
    analysis = analyse(texts, classifier, StabilityOptions(max_words=args.max_words, batch_size=args.batch_size))
    return analysis.results, analysis.figures


def demo(progress=True):
    analysis = analyse(["a wonderful film", "a dull and boring film"], "textxai/demo-sentiment")
    return analysis.report, analysis.results, analysis.figures
'''

METHOD = '''
"""The stability method's descriptor."""
from pathlib import Path

from stability_method import StabilityOptions
from textxai import stats
from textxai.registry import Method, register


def estimands(result):
    values = stats.require_values(result, "per_text", "stability", "the per-text 'per_text' list")
    return {"stability": stats.values_estimand(values)}


def estimate(words, options, num_labels=2, device="cpu", pairs=False):
    return sum(1 + min(n, options["max_words"]) for n in words)


METHOD = register(Method(
    name="stability", kind="measurement", order=60,
    help="share of single-word deletions that keep the predicted label",
    inputs={"texts": "texts"}, required=("texts",), option_groups={"options": StabilityOptions}, unit="text",
    estimands=estimands, estimate=estimate, runner="stability_method.runner",
    folder=Path(__file__).resolve().parents[1] / "measurements" / "stability",
))
'''

SCRIPT = '''
"""stability: the share of single-word deletions that keep a classifier's predicted label."""
import datasets
import evaluate

from stability_method import StabilityOptions, analyse
from textxai.classifier import as_classifier
from textxai.module_base import TextxaiMeasurement
from textxai.options import apply_keywords

_DESCRIPTION = "The share of single-word deletions that keep a classifier's predicted label."
_KWARGS_DESCRIPTION = """
Args:
    texts (`list` of `str`): the texts.
    model: the classifier.
Returns:
    stability (`float`): the mean over the texts; per_text (`list` of `float`).
"""


class Stability(TextxaiMeasurement):
    def _info(self):
        return evaluate.MeasurementInfo(module_type="measurement", description=_DESCRIPTION, citation="",
                                        inputs_description=_KWARGS_DESCRIPTION,
                                        features=datasets.Features({"texts": datasets.Value("string")}))

    def _compute(self, texts, model=None, tokenizer=None, options: StabilityOptions = None, **keywords):
        options = apply_keywords("stability", keywords, options=(StabilityOptions, options))["options"]
        return analyse(texts, as_classifier(model, tokenizer), options).summary
'''

TEXTS = ["the movie was wonderful", "a terrible boring film", "the food was not good", "the service was lovely"]


@pytest.fixture(scope="module")
def sixth(tmp_path_factory):
    """Its package (algorithm, runner, descriptor) and its module folder, written here; registered on import."""
    root = tmp_path_factory.mktemp("sixth")
    for path, text in (("stability_method/__init__.py", PACKAGE), ("stability_method/runner.py", RUNNER),
                       ("stability_method/method.py", METHOD), ("measurements/stability/stability.py", SCRIPT)):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text).lstrip())
    sys.path.insert(0, str(root))
    import stability_method.method

    yield stability_method.method.METHOD
    registry.unregister("stability")
    sys.path.remove(str(root))
    for name in [m for m in sys.modules if m.split(".")[0] == "stability_method"]:
        del sys.modules[name]
    assert "stability" not in registry.names()


def by_hand(texts, max_words):
    """Brute force: predict each text and each of its single-word deletions one by one."""
    from textxai.classifier import as_classifier

    clf = as_classifier("textxai/demo-sentiment")
    out = []
    for text in texts:
        words = text.split()
        label = int(clf.predict([text])[0])
        kept = [int(clf.predict([" ".join(words[:i] + words[i + 1:])])[0]) == label for i in range(min(len(words), max_words))]
        out.append(sum(kept) / len(kept))
    return out


def test_sixth_method_is_listed(sixth, capsys):
    assert registry.names() == BUILT_IN + ["stability"] and textxai.list_modules()[-2:] == ["stability", "toki_trust"]
    assert cli.main(["list"]) == 0
    line = next(row for row in capsys.readouterr().out.splitlines() if row.startswith("stability"))
    assert line.split()[1:3] == ["measurement", "available"] and line.endswith(sixth.help)


def test_sixth_method_runs_from_the_command_line_within_its_estimate(sixth, tmp_path):
    data = tmp_path / "reviews.csv"
    with data.open("w", newline="") as f:
        csv.writer(f).writerows([["text"]] + [[t] for t in TEXTS])
    argv = ["run", "stability", "--model", "textxai/demo-sentiment", "--data", str(data), "--max-words", "2"]
    needed = sum(1 + min(estimates.approx_words(t), 2) for t in TEXTS)  # its descriptor's estimate, read by hand
    args = cli.build_parser().parse_args(argv)
    assert estimates.for_run("stability", args, TEXTS, None) == needed == 12
    assert estimates.for_run("stability", cli.build_parser().parse_args(argv[:-2]), TEXTS, None) == 4 * 5  # default 4
    with pytest.raises(ValueError, match=r"--max-evaluations 11: textxai run stability needs about 12 model evaluations"):
        cli.main(argv + ["--max-evaluations", "11", "--output", str(tmp_path / "refused")])
    assert not (tmp_path / "refused" / "stability.json").exists()
    assert cli.main(argv + ["--max-evaluations", "12", "--output", str(tmp_path / "out")]) == 0
    results = json.loads((tmp_path / "out" / "stability.json").read_text())
    assert results["per_text"] == by_hand(TEXTS, 2) and results["stability"] == pytest.approx(np.mean(results["per_text"]))
    module = textxai.load("stability")
    assert module.compute(texts=TEXTS, model="textxai/demo-sentiment", max_words=2) == results


def test_sixth_method_gets_intervals_over_its_unit(sixth):
    result = {"per_text": [1.0, 0.5, 0.75, 0.25, 1.0, 0.5], "stability": 4.0 / 6}
    entry = stats.add_intervals("stability", result, n_resamples=999, seed=3)["intervals"]["stability"]
    direct = stats.bootstrap_interval(result["per_text"], n_resamples=999, seed=3)
    assert entry["unit"] == "text" and {k: entry[k] for k in direct} == direct
    module = textxai.load("stability")
    out = module.compute(texts=TEXTS, model="textxai/demo-sentiment", confidence_level=0.9, n_resamples=199)
    assert out["intervals"]["stability"]["unit"] == "text" and out["intervals"]["stability"]["n"] == 4


def test_sixth_method_in_the_training_callback(sixth, tmp_path):
    from test_integrations import make_trainer
    import tiny_models

    tokenizer = tiny_models.bert_tokenizer(tmp_path / "tok")
    trainer = make_trainer(tokenizer, tmp_path, max_steps=2, eval_steps=2)
    with pytest.raises(ValueError, match="modules: stability needs texts"):
        TextxaiCallback("stability", trainer=trainer)  # its descriptor's required inputs
    trainer.add_callback(TextxaiCallback({"stability": {"max_words": 3}}, texts=TEXTS, trainer=trainer))
    trainer.train()
    final = trainer.evaluate()
    expected = textxai.load("stability").compute(texts=TEXTS, model=(trainer.model, tokenizer), max_words=3, batch_size=3)
    assert final["eval_stability_stability"] == pytest.approx(expected["stability"], abs=0)
    assert any("eval_stability_stability" in e for e in trainer.state.log_history)


def test_sixth_method_has_its_demo_section(sixth, tmp_path, capsys):
    assert cli.main(["demo", "--modules", "stability", "--output", str(tmp_path), "--no-progress"]) == 0
    index = json.loads((tmp_path / "index.json").read_text())
    assert list(index) == ["models", "stability"]  # the models, then the methods asked for, in their order
    results = json.loads((tmp_path / "stability.json").read_text())
    assert results["per_text"] == by_hand(["a wonderful film", "a dull and boring film"], 4)
    assert f"stability: {results['stability']:.3f}" in capsys.readouterr().out


def test_demo_and_cache_choices_follow_the_registry(sixth):
    parser = cli.build_parser()
    assert parser.parse_args(["demo", "--modules", "stability"]).modules == ["stability"]
    assert parser.parse_args(["cache-modules", "stability"]).names == ["stability"]
    assert isinstance(parser.parse_args(["run", "stability", "--model", "m", "--data", "d"]), argparse.Namespace)


def test_analysis_rows_from_each_shape_of_per_example_results():
    """``Analysis.rows``: a list of rows as is, a dict of columns (inconsistency) row by row, toki's "examples"."""
    from textxai.registry import Analysis

    assert Analysis("m", {"per_example": [{"a": 1}, {"a": 2}]}).rows == [{"a": 1}, {"a": 2}]
    assert Analysis("m", {"per_example": {"inc": [[0], [1]], "labels": [[1], [0]]}}).rows == [
        {"inc": [0], "labels": [1]}, {"inc": [1], "labels": [0]}]
    assert Analysis("toki_trust", {"examples": [{"label": True}]}).rows == [{"label": True}]
    assert Analysis("m", {"n": 3}).rows == []
