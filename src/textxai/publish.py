"""``textxai publish MODULE --namespace NS [--dry-run DIR]``: the Hub Space repo of a module, assembled and uploaded.

A module's Space repo holds (everything at its root):

- ``<name>.py`` — the module script (and any other file of the module folder), so that
  ``evaluate.load("<namespace>/<name>")`` finds it, exactly as evaluate's own modules are published;
- ``README.md`` — the metric card, its YAML header completed for the Space: ``sdk: gradio``,
  ``sdk_version`` = the installed Gradio (the one textxai.spaces was tested with), ``app_file: app.py``, tags ``evaluate`` and ``metric`` (or ``measurement``); header fields of
  ``spaces/<name>/README.md`` are merged in;
- ``app.py`` (and the other files of ``spaces/<name>/``) — the Gradio app;
- ``textxai/`` — the package's source, vendored: ``app.py`` and ``<name>.py`` import it from the Space's root
  (the folder ``python app.py`` runs in). No package index serves textxai yet, and the Hub's builder installs
  ``requirements.txt`` mounted ALONE, before the repository's files are copied in, so a requirement naming a
  file of the repository (``./textxai.whl``, ``-e .``) cannot work there. With ``--wheel`` the package is
  taken from that wheel instead of this clone's source; nothing is built and nothing is written into the clone;
- ``requirements.txt`` — textxai's dependencies (``pyproject.toml``: the base ones and those of the extras the
  Space's ``spaces/<name>/requirements.txt`` names, e.g. ``textxai[spaces,toki]``), then the other lines of
  that file: everything an index serves;
- the header says ``python_version`` (the package needs Python >= 3.11; Spaces default to 3.10), and every
  ``textxai/<module>`` in the card, the script and the app names the given ``--namespace`` instead.

``assemble_space`` only writes the folder (``--dry-run``); ``publish`` also creates the Space
(``repo_type="space"``, ``space_sdk="gradio"``) and uploads the folder with ``huggingface_hub``.

>>> parser = argparse.ArgumentParser(prog="textxai publish")
>>> add_publish_arguments(parser)
>>> args = parser.parse_args(["naopc", "--namespace", "my-org", "--dry-run", "out"])
>>> (args.module, args.namespace, args.dry_run, args.token)
('naopc', 'my-org', 'out', None)
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

import yaml
from huggingface_hub import HfApi

from textxai import modules, registry

HUB_URL = "https://huggingface.co/spaces/{repo_id}"
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?")
_SKIP = {"__pycache__", ".ipynb_checkpoints", ".DS_Store"}
_KIND_TAG = {"metrics": "metric", "measurements": "measurement", "comparisons": "comparison"}
PYTHON_VERSION = "3.11"  # requires-python >= 3.11


class PublishError(RuntimeError):
    """The Hub refused or could not be reached while publishing."""


def _version() -> str:
    import textxai

    return textxai.__version__


def _check_namespace(namespace) -> str:
    if not isinstance(namespace, str) or not _NAME.fullmatch(namespace) or "--" in namespace or ".." in namespace:
        raise ValueError(f"namespace={namespace!r}: expected a Hub user or organization name "
                         "(letters, digits, '-', '_', '.'; e.g. 'my-org')")
    return namespace


def _space_folder(name: str) -> Path:
    """``spaces/<name>/`` next to the module folders (a clone of the repository)."""
    candidates = [root / "spaces" / name for root in modules._roots()]
    for folder in candidates:
        if (folder / "app.py").is_file():
            return folder
    raise FileNotFoundError(
        f"module={name!r}: its Gradio app spaces/{name}/app.py was not found (looked in "
        f"{', '.join(str(c) for c in candidates)}); publish from a clone of the textxai repository"
    )


def _split_card(text: str) -> tuple[dict, str]:
    """(YAML header as a dict, body) of a README; no header -> ({}, text)."""
    if text.startswith("---"):
        parts = re.split(r"^---[ \t]*$", text, maxsplit=2, flags=re.MULTILINE)
        if len(parts) == 3 and parts[0].strip() == "":
            header = yaml.safe_load(parts[1]) or {}
            if not isinstance(header, dict):
                raise ValueError(f"the YAML header of the card is a {type(header).__name__}: expected a mapping")
            return header, parts[2].lstrip("\n")
    return {}, text


def space_header(name: str, kind: str, *headers: dict) -> dict:
    """The Space's YAML header: defaults < given headers (in order) < the fields a module Space needs."""
    from textxai.extras import require

    gradio = require("gradio", "spaces", "textxai publish (the Space's sdk_version)")
    merged: dict = {"title": name, "emoji": "🔍", "colorFrom": "blue", "colorTo": "red", "sdk": "gradio",
                    "sdk_version": gradio.__version__, "app_file": "app.py", "pinned": False,
                    "license": "apache-2.0"}
    tags: list[str] = []
    for header in headers:
        for key, value in header.items():
            if key == "tags":
                tags.extend(str(t) for t in (value if isinstance(value, list) else [value]))
            else:
                merged[key] = value
    kind_tag = _KIND_TAG.get(kind, "metric")
    other_kinds = set(_KIND_TAG.values()) - {kind_tag}
    tags = ["evaluate", kind_tag] + [t for t in tags if t not in ("evaluate", kind_tag) and t not in other_kinds]
    # sdk_version: the Gradio the shell (textxai.spaces) was tested with here, whatever the card says
    merged.update(sdk="gradio", sdk_version=gradio.__version__, app_file="app.py", python_version=PYTHON_VERSION,
                  tags=list(dict.fromkeys(tags)))
    return merged


_SELF = re.compile(r"textxai\s*\[([^\]]*)\]\s*")


def dependencies(extras=()) -> list[str]:
    """textxai's requirements and those of ``extras`` (``textxai[a,b]`` inside an extra expanded), read from
    this clone's ``pyproject.toml``.

    >>> deps = dependencies(["spaces"])
    >>> any(d.startswith("torch") for d in deps), any(d.startswith("gradio") for d in deps)
    (True, True)
    """
    pyproject = Path(modules.__file__).resolve().parents[2] / "pyproject.toml"  # src/textxai/ -> the clone
    if not pyproject.is_file():
        raise FileNotFoundError(f"no pyproject.toml in {pyproject.parent}: publish from a clone of the textxai repository")
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    optional = project.get("optional-dependencies", {})
    out, pending, seen = list(project["dependencies"]), list(extras), set()
    while pending:
        extra = pending.pop(0).strip()
        if extra in seen:
            continue
        seen.add(extra)
        if extra not in optional:
            raise ValueError(f"textxai[{extra}]: not an extra of textxai; expected one of {sorted(optional)}")
        for requirement in optional[extra]:
            nested = _SELF.fullmatch(requirement)
            if nested:
                pending.extend(nested.group(1).split(","))
            elif requirement not in out:
                out.append(requirement)
    return out


def _requirements(*files: Path) -> str:
    """requirements.txt of the Space: textxai's dependencies (with the extras ``textxai[...]`` lines of
    ``files`` name), then the files' other lines; no line names textxai itself or a file."""
    extras, others = [], []
    for file in files:
        if not file.is_file():
            continue
        for line in file.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            package = re.split(r"[\s<>=!~\[;@]", line, maxsplit=1)[0].lower().replace("_", "-")
            if not line:
                continue
            if package == "textxai":
                nested = _SELF.fullmatch(line)
                extras.extend(nested.group(1).split(",") if nested else [])
            elif line not in others:
                others.append(line)
    lines = [f"# textxai {_version()}'s dependencies: its source is in ./textxai (app.py imports it from there);",
             "# the Hub installs this file alone, before the repository's files are copied in",
             *dependencies(extras)]
    return "\n".join(lines + [line for line in others if line not in lines]) + "\n"


def vendor_package(target: Path, wheel=None) -> Path:
    """Copy the textxai package into ``target/textxai``: this installation's source (``wheel=None``) or the
    package inside a built ``textxai-*.whl``. Nothing is built; the clone is only read."""
    destination = Path(target) / "textxai"
    if wheel is None:
        shutil.copytree(Path(modules.__file__).resolve().parent, destination,
                        ignore=shutil.ignore_patterns(*_SKIP, "*.pyc", "_modules"))
        return destination
    wheel = Path(wheel)
    if not wheel.is_file() or not wheel.name.startswith("textxai-") or wheel.suffix != ".whl":
        raise ValueError(f"wheel={str(wheel)!r}: expected a built textxai-*.whl file")
    try:
        with zipfile.ZipFile(wheel) as archive:
            members = [m for m in archive.namelist() if m.startswith("textxai/") and not m.startswith("textxai/_modules/")]
            if not members:
                raise ValueError(f"wheel={str(wheel)!r}: holds no textxai/ package")
            archive.extractall(target, members)
    except zipfile.BadZipFile:
        raise ValueError(f"wheel={str(wheel)!r}: not a zip archive; expected a built textxai-*.whl file") from None
    return destination


def _with_namespace(target: Path, namespace: str) -> None:
    """``textxai/<module>`` -> ``<namespace>/<module>`` in the card, scripts and app; the app's header too."""
    names = "|".join(sorted(registry.names()))
    pattern = re.compile(rf"\btextxai/({names})\b")
    for file in target.rglob("*"):
        if file.suffix in (".md", ".py") and file.is_file() and "textxai" not in file.relative_to(target).parts[:-1]:
            text = file.read_text(encoding="utf-8")
            new = pattern.sub(lambda m: f"{namespace}/{m.group(1)}", text)
            if file.name == "app.py":  # spaces.header_markdown reads it
                line = f"import os; os.environ.setdefault('TEXTXAI_NAMESPACE', {namespace!r})  # textxai publish\n"
                future = re.search(r"^from __future__ import .*\n", new, flags=re.MULTILINE)
                at = future.end() if future else 0
                new = new[:at] + line + new[at:]
            if new != text:
                file.write_text(new, encoding="utf-8")


def _copy_files(source: Path, target: Path, skip: set[str]) -> None:
    for item in sorted(source.iterdir()):
        if item.name in skip or item.name in _SKIP or item.suffix == ".pyc":
            continue
        if item.is_dir():
            shutil.copytree(item, target / item.name, ignore=shutil.ignore_patterns(*_SKIP, "*.pyc"), dirs_exist_ok=True)
        else:
            shutil.copy2(item, target / item.name)


def assemble_space(name: str, namespace: str, folder, force: bool = False, wheel=None) -> Path:
    """Write the Space repo of module ``name`` into ``folder`` and return the Space folder.

    The Space folder is ``folder`` itself when its last part is ``name``, else ``folder/name`` — so that
    ``evaluate.load(path)`` (which looks for ``<path>/<basename>.py``) loads it. An existing non-empty
    Space folder is an error unless ``force=True`` (then it is replaced). ``wheel``: a built textxai wheel whose
    package is vendored (default: this installation's source).
    """
    _check_namespace(namespace)
    module_folder = modules.module_path(name)  # ValueError for unknown names, FileNotFoundError when absent
    kind = registry.get(name).folder_kind
    card = module_folder / "README.md"
    if not card.is_file():
        raise FileNotFoundError(f"module={name!r}: its metric card {card} is missing; write it before publishing")
    space_folder = _space_folder(name)

    folder = Path(folder).expanduser()
    target = folder if folder.name == name else folder / name
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        if not force:
            raise FileExistsError(f"folder={str(target)!r} exists and is not empty; choose another folder or force=True "
                                  "(--force) to replace it")
    if wheel is not None:
        _check_wheel(wheel)  # before anything is written
    # built aside, beside the target (same file system: the swap is two renames), swapped in only when complete:
    # a failure (a bad wheel, a full disk) leaves an existing Space folder as it was
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.textxai-publish-", dir=target.parent))
    umask = os.umask(0)
    os.umask(umask)
    staging.chmod(0o777 & ~umask)  # mkdtemp's 0700 would become the Space folder's mode
    try:
        _assemble_into(staging, name, namespace, kind, module_folder, card, space_folder, wheel)
        _swap_in(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


VENDOR_MODULE = "textxai_vendor"
_VENDOR_CODE = '''"""The textxai package, vendored for ``evaluate.load`` (written by ``textxai publish``; no package index serves
textxai). ``evaluate.load("<namespace>/<module>")`` downloads the module script and this file (the script
imports it relatively); when ``import textxai`` fails, :func:`activate` unpacks the package below into the
user's cache and puts it on ``sys.path``. An installed textxai is used as it is."""
import base64
import hashlib
import importlib.util
import io
import os
import sys
import zipfile

ARCHIVE = "{archive}"


def activate():
    if importlib.util.find_spec("textxai") is not None:
        return None
    data = base64.b64decode(ARCHIVE)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(cache, "textxai", "vendored", hashlib.sha256(data).hexdigest()[:16])
    if not os.path.isfile(os.path.join(folder, "textxai", "__init__.py")):
        staging = f"{{folder}}.{{os.getpid()}}.partial"
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            archive.extractall(staging)
        try:
            os.replace(staging, folder)
        except OSError:  # another process unpacked it first
            pass
    sys.path.insert(0, folder)
    importlib.invalidate_caches()
    return folder
'''


def _vendor_for_evaluate(target: Path, name: str) -> None:
    """Make ``evaluate.load`` of the published module work where textxai is not installed: the package (as
    vendored in ``target/textxai``) zipped into ``textxai_vendor.py``, which the module script imports
    relatively (evaluate fetches such files with the script), activated before the script's textxai imports;
    those are indented under ``if True:`` because evaluate's dependency check, which reads the column-0
    imports before running the script, would otherwise refuse ``textxai`` as not installed."""
    import base64
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted((target / "textxai").rglob("*")):
            relative = file.relative_to(target)
            if file.is_file() and "_modules" not in relative.parts and file.suffix != ".pyc":
                archive.write(file, relative.as_posix())
    (target / f"{VENDOR_MODULE}.py").write_text(
        _VENDOR_CODE.format(archive=base64.b64encode(buffer.getvalue()).decode("ascii")), encoding="utf-8")
    script = target / f"{name}.py"
    lines = script.read_text(encoding="utf-8").splitlines(keepends=True)
    imports = [i for i, line in enumerate(lines) if re.match(r"(from textxai\b|import textxai\b)", line)]
    if not imports:
        return
    first = imports[0]
    for i in imports:
        lines[i] = "    " + lines[i]
    # (no comment on the relative import's line: evaluate reads what follows it as the file's path)
    lines.insert(first, f"# textxai publish: the package, vendored in {VENDOR_MODULE}.py (no index serves it)\n"
                        f"from .{VENDOR_MODULE} import activate as _activate_textxai\n_activate_textxai()\n"
                        "if True:  # after activate(): evaluate's dependency check reads column-0 imports only\n")
    script.write_text("".join(lines), encoding="utf-8")


def _check_wheel(wheel) -> None:
    wheel = Path(wheel)
    if not wheel.is_file() or not wheel.name.startswith("textxai-") or wheel.suffix != ".whl":
        raise ValueError(f"wheel={str(wheel)!r}: expected a built textxai-*.whl file")
    try:
        with zipfile.ZipFile(wheel) as archive:
            if not any(m.startswith("textxai/") for m in archive.namelist()):
                raise ValueError(f"wheel={str(wheel)!r}: holds no textxai/ package")
    except zipfile.BadZipFile:
        raise ValueError(f"wheel={str(wheel)!r}: not a zip archive; expected a built textxai-*.whl file") from None


def _swap_in(staging: Path, target: Path) -> None:
    """Put the complete ``staging`` folder at ``target``; an old ``target`` is removed only once replaced."""
    old = None
    if target.exists() or target.is_symlink():
        old = target.with_name(f".{target.name}.textxai-old-{staging.name.rsplit('-', 1)[-1]}")
        target.rename(old)
    try:
        staging.rename(target)
    except BaseException:
        if old is not None:
            old.rename(target)
        raise
    if old is not None:
        shutil.rmtree(old) if old.is_dir() and not old.is_symlink() else old.unlink()


_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def _links_for_the_hub(body: str, card_folder: Path, target: Path) -> str:
    """The card's relative links, which would break on the Hub (the card's ``../../docs/...`` pages are not in the
    Space repo): a page found beside the card is copied into ``target/docs/`` and linked there; one absent (an
    installed wheel carries no docs) becomes plain text naming the page. Web links and anchors are left as written.

    >>> import tempfile; t = Path(tempfile.mkdtemp())
    >>> _links_for_the_hub("[NAOPC](../../docs/methods/naopc.md#beam) and [x](https://x.org)", t / "a" / "b", t)
    'NAOPC (docs/methods/naopc.md#beam in the textxai documentation) and [x](https://x.org)'
    """
    def one(match):
        text, href = match.groups()
        if re.match(r"^[a-z][a-z0-9+.-]*:|^#|^/", href):
            return match.group(0)
        path, _, anchor = href.partition("#")
        source = (card_folder / path).resolve()
        if not source.is_file():
            shown = "/".join(p for p in Path(path).parts if p != "..")
            return f"{text} ({shown}{'#' + anchor if anchor else ''} in the textxai documentation)"
        (target / "docs").mkdir(exist_ok=True)
        shutil.copyfile(source, target / "docs" / source.name)
        return f"[{text}](docs/{source.name}{'#' + anchor if anchor else ''})"

    return _LINK.sub(one, body)


def _assemble_into(target: Path, name, namespace, kind, module_folder, card, space_folder, wheel) -> None:
    _copy_files(module_folder, target, {"README.md", "requirements.txt"})
    _copy_files(space_folder, target, {"README.md", "requirements.txt"})

    card_header, body = _split_card(card.read_text(encoding="utf-8"))
    space_readme = space_folder / "README.md"
    space_header_fields = _split_card(space_readme.read_text(encoding="utf-8"))[0] if space_readme.is_file() else {}
    header = space_header(name, kind, card_header, space_header_fields)
    header_text = yaml.safe_dump(header, sort_keys=False, allow_unicode=True, width=100)
    body = _links_for_the_hub(body, card.parent, target)
    (target / "README.md").write_text(f"---\n{header_text}---\n\n{body}", encoding="utf-8")
    vendor_package(target, wheel)
    _vendor_for_evaluate(target, name)
    inside = target / "textxai" / "_modules" / kind / name  # where textxai.load finds it, as in an installed wheel
    inside.mkdir(parents=True)
    _copy_files(module_folder, inside, set())
    (target / "requirements.txt").write_text(
        _requirements(module_folder / "requirements.txt", space_folder / "requirements.txt"), encoding="utf-8")
    _with_namespace(target, namespace)


def publish(name: str, namespace: str, token: str | None = None, dry_run_dir=None, private: bool = False,
            force: bool = False, wheel=None) -> str:
    """Assemble the Space of module ``name`` and upload it to ``<namespace>/<name>``; return its URL.

    With ``dry_run_dir`` only the folder is written (nothing is uploaded) and its path is returned.
    ``token`` defaults to the saved login / ``HF_TOKEN``.
    """
    _check_namespace(namespace)
    if dry_run_dir is not None:
        return str(assemble_space(name, namespace, dry_run_dir, force=force, wheel=wheel))
    repo_id = f"{namespace}/{name}"
    with tempfile.TemporaryDirectory(prefix="textxai-space-") as tmp:
        folder = assemble_space(name, namespace, Path(tmp) / name, wheel=wheel)
        api = HfApi(token=token)
        try:
            api.create_repo(repo_id, repo_type="space", space_sdk="gradio", exist_ok=True, private=private)
            api.upload_folder(repo_id=repo_id, folder_path=str(folder), repo_type="space",
                              commit_message=f"textxai {_version()}: {name}")
        except Exception as error:  # noqa: BLE001 - network, auth and Hub errors all become one clear message
            raise PublishError(_hub_message(repo_id, error)) from error
    return HUB_URL.format(repo_id=repo_id)


def _hub_message(repo_id: str, error: Exception) -> str:
    status = getattr(getattr(error, "response", None), "status_code", None)
    text = f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
    if status in (401, 403):
        return (f"the Hub refused to create or write the Space {repo_id!r} ({text}); log in with `hf auth login` "
                "or pass --token with write access to the namespace")
    chain, seen = [], error
    while seen is not None and len(chain) < 20:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    if any(isinstance(e, (ConnectionError, TimeoutError)) or type(e).__name__ in ("ConnectError", "ConnectTimeout",
           "OfflineModeIsEnabled", "gaierror") for e in chain):
        return (f"could not reach the Hub to publish {repo_id!r} ({text}); check the connection (HF_HUB_OFFLINE "
                "must be unset), or use --dry-run DIR to only write the folder")
    return f"publishing the Space {repo_id!r} failed ({text})"


# ----------------------------------------------------------------------------- CLI
def add_publish_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``textxai publish``."""
    parser.add_argument("module", help=f"module to publish, one of {registry.names()}")
    parser.add_argument("--namespace", required=True, help="Hub user or organization that owns the Space")
    parser.add_argument("--dry-run", metavar="DIR", default=None,
                        help="only write the Space folder into DIR (DIR/<module> unless DIR is named <module>)")
    parser.add_argument("--token", default=None, help="Hub token with write access (default: saved login / HF_TOKEN)")
    parser.add_argument("--private", action="store_true", help="create the Space as private")
    parser.add_argument("--force", action="store_true", help="replace an existing non-empty --dry-run folder")
    parser.add_argument("--wheel", default=None,
                        help="a built textxai wheel whose package the Space vendors (default: this clone's source)")


def main_publish(args: argparse.Namespace) -> int:
    """Run ``textxai publish``; print the folder or the Space URL. Exit code 0, 2 for bad input, 1 for Hub errors."""
    try:
        result = publish(args.module, args.namespace, token=getattr(args, "token", None),
                         dry_run_dir=getattr(args, "dry_run", None), private=getattr(args, "private", False),
                         force=getattr(args, "force", False), wheel=getattr(args, "wheel", None))
    except (ValueError, TypeError, FileNotFoundError, FileExistsError) as error:
        print(f"textxai publish: error: {error}", file=sys.stderr)
        return 2
    except PublishError as error:
        print(f"textxai publish: error: {error}", file=sys.stderr)
        return 1
    if getattr(args, "dry_run", None) is not None:
        print(f"Space folder written to {result} (nothing uploaded); check it with: "
              f"python -c \"import evaluate; evaluate.load('{result}')\"")
    else:
        print(f"published {args.module} to {result}")
    return 0
