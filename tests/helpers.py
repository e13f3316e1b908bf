"""Small helpers shared by the tests: a brute-force edit distance, Space loading, saving tiny models."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def edit_distance(a, b) -> int:
    """Textbook Levenshtein dynamic programme over two sequences, independent of the Levenshtein package."""
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
        prev = cur
    return prev[-1]


def load_space_app(name: str):
    """Import spaces/<name>/app.py as a module (its ``demo`` is built, not launched)."""
    path = ROOT / "spaces" / name / "app.py"
    spec = importlib.util.spec_from_file_location(f"{name}_space_app", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def save_model(model, tokenizer, folder: Path) -> str:
    """``save_pretrained`` of a model and its tokenizer into ``folder``; returns the folder as a string."""
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def save_headless(folder: str, target) -> str:
    """A copy of the classifier ``folder`` without its classification head weights and without ``architectures``
    in its config (a checkpoint transformers would complete with a random head)."""
    import json
    import shutil

    from safetensors.torch import load_file, save_file

    target = Path(target)
    shutil.copytree(folder, target, dirs_exist_ok=True)
    weights = load_file(target / "model.safetensors")
    save_file({k: v for k, v in weights.items() if not k.startswith("classifier.")}, target / "model.safetensors",
              metadata={"format": "pt"})
    config = json.loads((target / "config.json").read_text())
    config.pop("architectures", None)
    (target / "config.json").write_text(json.dumps(config))
    return str(target)


def run_cli(argv) -> tuple[int, str]:
    """``textxai`` run in this process (``cli.main`` with one-line errors), its output hidden: (exit code, stderr).
    A traceback on stderr fails the calling test."""
    import contextlib
    import io
    import warnings

    from textxai import cli

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            code = cli.main(argv, one_line_errors=True)
        except SystemExit as stop:
            code = stop.code
    assert "Traceback" not in err.getvalue(), err.getvalue()
    return code, err.getvalue()
