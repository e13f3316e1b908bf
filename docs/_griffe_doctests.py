"""A griffe extension of the documentation site (mkdocs.yml): the library's docstrings show their doctests as bare
``>>>`` lines (run by ``pytest --doctest-modules``); Markdown would read ``x["a"]["b"]`` in them as a link, so each
run of ``>>>`` / ``...`` lines and their expected output is put into a ``pycon`` code fence before rendering."""
from __future__ import annotations

import griffe


def fence_doctests(text: str) -> str:
    lines, out, inside = text.splitlines(), [], False
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if not inside and stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}```pycon")
            inside = True
        elif inside and not stripped:
            out.append(f"{indent}```")
            inside = False
        out.append(line)
    if inside:
        out.append(f"{indent}```")
    return "\n".join(out)


class FenceDoctests(griffe.Extension):
    def on_instance(self, *, obj, **kwargs) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
