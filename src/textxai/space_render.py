"""The Spaces' shared renderers: an analysis' warnings, the word diff of an edit, the intervals table. Every text
escaped. Importable from :mod:`textxai.spaces`."""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from textxai import stats
from textxai.render import format_interval
from textxai.space_inputs import escape
from textxai.stats import IntervalOptions


def warnings_html(warnings) -> str:
    """An analysis' warnings (``Analysis.warnings``: the sentences ``textxai run`` writes and the module returns),
    one escaped line each: the one rendering of every Space.

    >>> warnings_html(["2 of 5 texts never flip <5>"])
    "<p class='textxai-warning'>⚠ 2 of 5 texts never flip &lt;5&gt;</p>"
    """
    return "".join(f"<p class='textxai-warning'>⚠ {escape(w)}</p>" for w in warnings)


_INS = '<ins class="textxai-ins" style="background:#bbf7d0;text-decoration:none">{}</ins>'
_DEL = '<del class="textxai-del" style="color:#b91c1c">{}</del>'


def diff_html(before: str, after: str, word_tokenizer: str = "spacy", keep_whitespace: bool = False) -> str:
    """``after`` as written, with its word edits against ``before``: removed words struck out, new words green.

    Words are :func:`textxai.words.word_spans` with ``word_tokenizer`` (``"spacy"`` or ``"whitespace"``);
    ``keep_whitespace=True`` makes runs of extra white space words too (CEval's token distance), shown as ␣
    when they are edited. Every text is escaped. The one diff of every Space (inconsistency chains, CEval
    counterfactuals, the TOKI attack).

    >>> diff_html("a good film", "a great film", "whitespace")
    'a <del class="textxai-del" style="color:#b91c1c">good</del> <ins class="textxai-ins" \
style="background:#bbf7d0;text-decoration:none">great</ins> film'
    """
    import Levenshtein

    from textxai.words import word_spans

    shown = lambda w: escape(w if w.strip() else "␣")  # noqa: E731 - an edited white-space word stays visible
    a = [w for w, _, _ in word_spans(before, word_tokenizer, keep_whitespace)]
    spans = word_spans(after, word_tokenizer, keep_whitespace)
    b = [w for w, _, _ in spans]
    parts, pos = [], 0
    for op, i1, i2, j1, j2 in Levenshtein.opcodes(a, b):
        if op != "equal" and i2 > i1:
            removed = _DEL.format(" ".join(shown(w) for w in a[i1:i2]))
            if j1 < len(spans):  # before the next word of ``after``, after the white space that precedes it
                parts += [escape(after[pos:spans[j1][1]]), removed + " "]
                pos = spans[j1][1]
            else:
                parts += [escape(after[pos:]), " " + removed]
                pos = len(after)
        for j in range(j1, j2):
            _, start, end = spans[j]
            parts.append(escape(after[pos:start]))
            parts.append(_INS.format(shown(after[start:end])) if op != "equal" else escape(after[start:end]))
            pos = end
    parts.append(escape(after[pos:]))
    return "".join(parts)


SPACE_MIN_UNITS = 5


def space_intervals_html(module_name: str, result: dict, keys: Sequence[str] | None = None,
                         min_units: int = SPACE_MIN_UNITS, options: IntervalOptions | None = None) -> str:
    """An HTML table of the intervals of ``result`` for a Space (the result needs its per-example values), or a
    one-line note when fewer than ``min_units`` units were given (an interval from 3 examples says little).
    ``options``: :class:`textxai.stats.IntervalOptions` (default: its defaults, as every surface).

    >>> html = space_intervals_html("toki_trust", {"trust_labels": [True, False, True, True, True, False],
    ...                                            "trustworthy_rate": 4 / 6})
    >>> "0.667 [" in html and "n = 6 correct predictions" in html
    True
    >>> space_intervals_html("toki_trust", {"trust_labels": [True, None], "trustworthy_rate": 1.0})[:40]
    '<p class="textxai-intervals-note">Confid'
    """
    options = options or stats.IntervalOptions()
    ests = stats.estimands(module_name, result)
    wanted = [k for k in (keys or ests) if k in ests]
    most = max((int(ests[k].counted.sum()) for k in wanted), default=0)
    unit = stats.resampling_unit(module_name)
    if most < min_units:
        return (f'<p class="textxai-intervals-note">Confidence intervals are shown from {min_units} {unit}s on '
                f"(here {most}).</p>")
    stats.add_intervals(module_name, result, **dataclasses.asdict(options))
    rows = "".join(f"<tr><td>{escape(k)}</td><td>{escape(format_interval(result['intervals'][k]))}</td>"
                   f"<td>{result['intervals'][k]['n']}</td><td>{escape(result['intervals'][k]['method'])}</td></tr>"
                   for k in wanted)
    return (f'<table class="textxai-intervals"><thead><tr><th>summary</th><th>value [{options.confidence_level:.0%} CI]</th>'
            f"<th>n</th><th>method</th></tr></thead><tbody>{rows}</tbody></table>"
            f'<p class="textxai-intervals-note">Bootstrap intervals over the {escape(unit)}s '
            f"(n = {most} {escape(unit)}s): a wide interval means the number could change a lot with other "
            "examples.</p>")
