"""mkdocs hooks of the documentation site (mkdocs.yml `hooks:`).

- The module cards (metrics/*/README.md, measurements/*/README.md: also the Hub's cards) become the site's
  pages cards/<name>.md, without their YAML header; a page's link to a card's README.md (right when the
  Markdown is read on GitHub) is pointed at that page, and a card's links into docs/ at the site's pages.
- CHANGELOG.md is written for the maintainers and names the work items a change came from ("(issue 26)"); the
  site's changelog page shows it without those numbers, which mean nothing to a reader of the site.
"""
from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File

_ITEM = re.compile(r"\s*\((?:issues?|round) \d+(?:[,;/ ]+\d+)*\)"          # " (issue 26)", " (issues 24, 26)"
                   r"|;\s*(?:issues?|round) \d+(?:[,/ ]+\d+)*(?=\))"        # "...; issue 26)"
                   r"|(?:issues?|round) \d+(?:[,/ ]+\d+)*(?:[;,]\s*|:\s*(?=\"))"  # "issue 26; ", 'issue 26: "'
                   r"|\(\s*(?:issues?|round) \d+\):?\s*", re.I)
_LINK = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")


def strip_work_items(markdown: str) -> str:
    """Remove "(issue 26)", "(issues 24, 26)" and "issue 26; " from a page's Markdown."""
    return _ITEM.sub("", markdown)


def cards(root: Path) -> dict[str, Path]:
    """{name: README.md} of every module folder of the repository."""
    found = sorted(root.glob("metrics/*/README.md")) + sorted(root.glob("measurements/*/README.md"))
    return {p.parent.name: p for p in found}


def card_page(text: str) -> str:
    """A card without its YAML header, its links into docs/ made relative to cards/."""
    if text.startswith("---\n"):
        text = text.split("\n---\n", 1)[1]
    return text.replace("](../../docs/", "](../")


def _root(config) -> Path:
    return Path(config.config_file_path).resolve().parent


def on_files(files, config, **kwargs):
    for name, readme in cards(_root(config)).items():
        files.append(File.generated(config, f"cards/{name}.md", content=card_page(readme.read_text(encoding="utf-8"))))
    return files


def on_page_markdown(markdown, page, config, **kwargs):
    src = page.file.src_uri
    if src == "changelog.md":  # CHANGELOG.md itself, in place of its include line
        changelog = (_root(config) / "CHANGELOG.md").read_text(encoding="utf-8")
        return strip_work_items(markdown.replace('--8<-- "CHANGELOG.md"', changelog))
    if src.startswith("cards/"):
        return markdown
    here = posixpath.dirname(f"{Path(config.docs_dir).name}/{src}")   # the page's folder, from the repository root
    names = {f"{p.parent.parent.name}/{name}/README.md": name for name, p in cards(_root(config)).items()}

    def point(match):
        target = posixpath.normpath(posixpath.join(here, match.group(1)))
        if target in names:
            page_dir = posixpath.dirname(src)
            link = posixpath.relpath(f"cards/{names[target]}.md", page_dir or ".")
            return f"]({link}{match.group(2) or ''})"
        return match.group(0)

    return _LINK.sub(point, markdown)
