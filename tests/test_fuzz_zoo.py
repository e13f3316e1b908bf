"""A fuzzer over the zoo (tests/zoo.py): texts from every Unicode category, right-to-left scripts, emoji,
zero-width and control characters, the zoo tokenizers' own special-token strings and lengths past the window;
options of the wrong type, NaN / inf and strings as a config file writes them -- through the classifier, the
library entry points and ``textxai run``. The outcome is a correct result (checked against an independent
computation) or a ValueError / TypeError (CLI: exit 2, one line) naming the argument: no hang (pytest-timeout),
no obscure error, no silent wrong result.

``make test`` runs a fixed seed with few examples; ``make fuzz`` (TEXTXAI_FUZZ=deep) searches with fresh seeds
and many more examples.
"""
from __future__ import annotations

import json
import math
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from helpers import run_cli

DEEP = os.environ.get("TEXTXAI_FUZZ") == "deep"
EXAMPLES = int(os.environ.get("TEXTXAI_FUZZ_EXAMPLES", 200 if DEEP else 8))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=not DEEP, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
TIMEOUT = 3600 if DEEP else 300
MEMBERS = ("bert", "roberta", "gpt2", "xlnet", "albert", "t5", "llama")
SPECIAL = ["[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]", "<s>", "</s>", "<pad>", "<unk>", "<mask>", "<sep>", "<cls>",
           "<|endoftext|>", "▁", "Ġ", "##ing"]
PIECES = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=8),        # every category but lone surrogates
    st.sampled_from(["שלום עולם", "مرحبا بالعالم", "\u202eevil\u202c", "😀👍🏽👨‍👩‍👧", "a\u200bb\u200dc\ufeff",
                     "\x00\x07\x1b[31m\r", "Ǆ ß İ ﬁ", "e\u0301\u0308", "\t\n ", "..,,!!", "don't", "1 2 3"]),
    st.sampled_from(SPECIAL))
TEXT = st.lists(PIECES, min_size=0, max_size=6).map(" ".join)
LONG = st.integers(50, 400).map(lambda n: " ".join(["a wonderful film , truly"] * n))
TEXTS = st.lists(st.one_of(TEXT, TEXT, LONG), min_size=1, max_size=3)
OPTION = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**9), st.floats(allow_nan=True, allow_infinity=True),
                   st.sampled_from(["", "3", "3.0", "nan", "inf", "-1", "true", "null", "[1, 2]", "{}", "1e309"]),
                   st.lists(st.integers(0, 3), max_size=2))


def _named(error: Exception, names) -> bool:
    return isinstance(error, (ValueError, TypeError)) and any(n in str(error) for n in names)


@pytest.fixture(scope="module")
def clfs(zoo):
    from textxai.classifier import TextClassifier

    return {name: TextClassifier(zoo.classifiers[name].folder, device="cpu", max_length=64) for name in MEMBERS}


@pytest.mark.timeout(TIMEOUT)
@FUZZ
@given(name=st.sampled_from(MEMBERS), texts=TEXTS)
def test_fuzz_texts_probabilities_and_word_view(clfs, name, texts):
    """Probabilities are finite distributions, the same alone as in a batch; every word id names a word; masking
    a word changes only its tokens."""
    clf = clfs[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # truncation of the long texts is announced; not the point here
        try:
            probs = clf.predict_proba(texts, batch_size=2)
        except ValueError as error:  # an empty text for a tokenizer without special tokens (GPT-2, Llama)
            assert _named(error, ("texts[",)) and "no tokens" in str(error), error
            return
        alone = np.vstack([clf.predict_proba([t]) for t in texts])
        encodings = clf.word_encodings(texts)
    assert np.isfinite(probs).all() and np.allclose(probs.sum(1), 1.0, atol=1e-6)
    np.testing.assert_allclose(probs, alone, rtol=1e-5, atol=1e-6)
    for enc in encodings:
        assert len(enc.input_ids) <= clf.max_length
        assert enc.word_ids.max(initial=-1) < enc.n_words
        if enc.n_words:
            masks = np.eye(enc.n_words, dtype=bool)
            for j, (row, _) in enumerate(clf.perturbed_token_rows(enc, masks, "mask")):
                changed = np.flatnonzero(row != enc.input_ids)
                assert set(changed) <= set(enc.tokens_of(j))  # its own tokens and those it shares


@pytest.mark.timeout(TIMEOUT)
@FUZZ
@given(name=st.sampled_from(MEMBERS), texts=TEXTS)
def test_fuzz_texts_fim_and_naopc(clfs, name, texts):
    """FIM difficulty is finite and its probabilities the classifier's; NAOPC's scores are finite, or a clear
    error names the texts (a text with no word the model sees)."""
    from textxai import naopc
    from textxai.fim.text import difficulty

    clf = clfs[name]
    short = [t[:200] for t in texts]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = difficulty(short, clf)
        except ValueError as error:
            assert _named(error, ("texts",)), error
        else:
            assert np.isfinite(result["difficulty"]).all() and (result["difficulty"] >= 0).all()
            np.testing.assert_allclose(result["probs"], clf.predict_proba(short), rtol=1e-4, atol=1e-6)
        try:
            scores = naopc.compute(short, None, clf, attribution_method="omission", normalization="none")
        except ValueError as error:
            assert _named(error, ("texts",)), error
        else:
            assert all(math.isfinite(scores[k]) for k in ("comprehensiveness", "sufficiency"))


def _library_options():
    return st.fixed_dictionaries({}, optional={"batch_size": OPTION, "beam_size": OPTION, "max_exact_words": OPTION,
                                               "attribution_method": OPTION, "normalization": OPTION})


@pytest.mark.timeout(TIMEOUT)
@FUZZ
@given(options=_library_options())
def test_fuzz_options_of_the_modules(clfs, options):
    """Wrong types, NaN / inf and config-file strings as options of a module's compute: a result or an error
    naming the option given."""
    import textxai

    module = textxai.load("naopc")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = module.compute(texts=["a wonderful film"], model=clfs["bert"],
                                    **{"attribution_method": "omission", **options})
    except (ValueError, TypeError) as error:
        assert any(k in str(error) for k in options) or "attributions=" in str(error), \
            f"{type(error).__name__}: {error} ({options})"
    else:
        assert math.isfinite(result["comprehensiveness"]), options


CLI_FLAGS = ("--batch-size", "--beam-size", "--max-exact-words", "--max-evaluations", "--normalization",
             "--attribution-methods")


@pytest.mark.timeout(TIMEOUT)
@FUZZ
@given(flag=st.sampled_from(CLI_FLAGS), value=OPTION.map(lambda v: json.dumps(v) if not isinstance(v, str) else v),
       texts=st.lists(TEXT, min_size=1, max_size=2))
def test_fuzz_cli_run(zoo, tmp_path_factory, flag, value, texts):
    """`textxai run naopc` with a fuzzed flag value and fuzzed texts: exit 0 with a finite summary, or exit 2 with
    one line naming the flag (or the data), never a traceback."""

    folder = tmp_path_factory.mktemp("fuzzcli")
    data = folder / "data.jsonl"
    data.write_text("\n".join(json.dumps({"text": t}) for t in texts) + "\n")
    argv = ["run", "naopc", "--model", zoo.classifiers["bert"].folder, "--data", str(data), "--output",
            str(folder / "out"), "--no-progress", "--attribution-methods", "omission", flag, value]
    code, stderr = run_cli(argv)
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    if code == 0:
        written = json.loads((folder / "out" / "naopc.json").read_text())
        values = [v for k, v in written.items() if k.endswith("comprehensiveness") and isinstance(v, float)]
        assert values and all(math.isfinite(v) for v in values), written.keys()
    else:
        assert code == 2 and lines, stderr
        assert flag in lines[-1] or "--data" in lines[-1] or "text" in lines[-1], lines


def _audit_fields():
    import dataclasses

    from textxai.audit.options import _CLASSES

    return [(stage, f.name) for stage, cls in _CLASSES.items() for f in dataclasses.fields(cls)]


@pytest.mark.timeout(TIMEOUT)
@FUZZ
@given(where=st.sampled_from(_audit_fields()), value=OPTION, form=st.sampled_from(["python", "json", "yaml"]))
def test_fuzz_audit_config_values(tmp_path_factory, where, value, form):
    """Any value of any audit option, given in Python or written by a JSON / YAML config file: options whose
    numbers are finite and of the option's type, or a ValueError / TypeError naming `stage.option`."""
    import dataclasses

    import yaml

    from textxai.audit.options import _CLASSES, audit_options, read_config

    stage, name = where
    config = {stage: {name: value}}
    if form != "python":
        path = tmp_path_factory.mktemp("config") / f"audit.{form}"
        try:
            path.write_text(json.dumps(config) if form == "json" else yaml.safe_dump(config))
        except (ValueError, yaml.YAMLError):
            return
        config = read_config(str(path))
    try:
        options = audit_options(config)
    except (ValueError, TypeError) as error:
        assert f"{stage}.{name}" in str(error), f"{type(error).__name__}: {error} ({config})"
        return
    got = getattr(getattr(options, stage), name)
    default = getattr(_CLASSES[stage](), name)
    assert not (isinstance(got, float) and not math.isfinite(got)), (where, value, got)
    if isinstance(default, bool):
        assert isinstance(got, bool), (where, value, got)
    elif isinstance(default, int):
        assert isinstance(got, int) and not isinstance(got, bool), (where, value, got)
    assert dataclasses.is_dataclass(getattr(options, stage))


def _audit_flags():
    return [f"--{stage}.{name}" for stage, name in _audit_fields()] + ["--limit", "--max-evaluations", "--profile",
                                                                        "--sections", "--label-column"]


@pytest.mark.timeout(TIMEOUT)
@FUZZ
@given(flag=st.sampled_from(_audit_flags()), value=OPTION.map(lambda v: json.dumps(v) if not isinstance(v, str) else v))
def test_fuzz_cli_audit_flags(zoo, tmp_path_factory, flag, value):
    """`textxai audit` with a fuzzed flag value, stopped before any model call by a budget of one evaluation:
    exit 2 with one line naming the flag given (refused), or --max-evaluations (accepted), never a traceback."""

    folder = tmp_path_factory.mktemp("fuzzaudit")
    data = folder / "data.csv"
    data.write_text("text,label\na wonderful film,LABEL_1\nthe plot was boring,LABEL_0\n")
    max_evaluations = [] if flag == "--max-evaluations" else ["--max-evaluations", "1"]
    if flag != "--trust.class_names":   # the zoo's LABEL_0 / LABEL_1 need words for TOKI
        max_evaluations += ["--trust.class_names", "bad", "good"]
    argv = ["audit", "--model", zoo.classifiers["bert"].folder, "--data", str(data), "--output", str(folder / "out"),
            "--no-progress", *max_evaluations, flag, value]
    code, stderr = run_cli(argv)
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, (argv, stderr)
    named = (flag, flag.lstrip("-"), "--max-evaluations", "--label-column", "--data")
    assert any(n in lines[0] for n in named), (argv, lines)


@pytest.mark.parametrize("value", ["nan", float("nan"), float("inf"), "1e309", "-inf"])
def test_audit_config_refuses_non_finite_numbers_naming_the_option(value):
    """Found by test_fuzz_audit_config_values: NaN passed every range check (`difficulty.bins: nan` reached the
    stage), inf failed inside int() with 'cannot convert float infinity to integer' and no option named."""
    from textxai.audit.options import audit_options

    for stage, name in (("difficulty", "bins"), ("intervals", "confidence_level"), ("faithfulness", "max_texts")):
        with pytest.raises(ValueError, match=rf"^{stage}\.{name}=.*: expected a finite number"):
            audit_options({stage: {name: value}})


def test_an_empty_audit_config_value_is_not_given():
    """`hardest:` left empty in a YAML file is None: the option's default, where it was None (no int) before."""
    from textxai.audit.options import AuditOptions, audit_options

    assert audit_options({"difficulty": {"hardest": None}}).difficulty.hardest == AuditOptions().difficulty.hardest
    assert audit_options({"trust": {"max_texts": None}}).trust.max_texts is None
