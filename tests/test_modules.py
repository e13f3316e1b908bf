"""Every module: loadable by name (editable install and wheel), docstring Examples run as doctests."""
import doctest
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import textxai
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
    for section in ("Description", "How to Use", "Inputs", "Output Values", "Values from Popular Papers",
                    "Examples", "Limitations and Bias", "Citation"):
        assert any(h.endswith(section) for h in headings), f"{name} card misses the section {section!r}"


@pytest.mark.parametrize("name", PRESENT)
def test_module_docstring_examples(name):
    script = _module_script(name)
    parser = doctest.DocTestParser()
    test = parser.get_doctest(script._KWARGS_DESCRIPTION, {"textxai": textxai}, f"{name}._KWARGS_DESCRIPTION", None, 0)
    assert len(test.examples) >= 2, f"{name}: its Examples need at least 2 statements"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0, f"{name}: {runner.failures} failing example(s) (see output above)"


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
