"""The inconsistency method's option groups: the one source of their defaults (argparse, the Space, the estimate).

Each group is a frozen dataclass; :func:`textxai.inconsistency.analyse` also takes each field as a keyword
(:func:`textxai.options.apply_keywords`). The field names are the ``textxai run inconsistency`` flags' dests
(``--word-tokenizer`` -> ``word_tokenizer``).

>>> ScoreOptions().pooling, EditorOptions().steps
('pooled', 10)
>>> editor_options(EditorOptions(editor="deletion", n_words=2))
{'max_words': 2}
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from textxai.inconsistency.checks import DEFAULT_N


@dataclass(frozen=True)
class ScoreOptions:
    """How chains are scored: report inc@n etc. at these ``n``, ``pooling`` over chains, the word tokenizer of
    the distances; ``return_per_example`` adds the per-chain values to the summary (the module's option)."""

    n: tuple = DEFAULT_N
    pooling: str = "pooled"
    word_tokenizer: str = "spacy"
    return_per_example: bool = False


@dataclass(frozen=True)
class EditorOptions:
    """The editor feedback loop: ``editor`` (a built-in name or any callable ``list[str] -> list[list[str]]``)
    fed its own output ``steps`` times, keeping the candidate ``selection`` picks; the built-in editors' sizes
    (``n_words``, ``max_words``, ``n_neighbours``, ``n_substitutes``) and the LLM editor's ``editor_model``,
    ``editor_candidates`` (k rewrites per text, the classifier choosing) and ``editor_prompt``
    (:data:`textxai.llm_editor.DEFAULTS`)."""

    editor: str | Callable = "substitution"
    steps: int = 10
    selection: str = "flip_then_min_distance"
    n_words: int = 3
    max_words: int | None = None
    n_neighbours: int = 30
    n_substitutes: int = 3
    editor_model: str | None = None
    editor_candidates: int = 4
    editor_prompt: str = "ceval"


@dataclass(frozen=True)
class RunOptions:
    """How the models run (results do not depend on them): batch size of the classifier and the LM, progress bars."""

    batch_size: int = 32
    progress: bool = False


@dataclass(frozen=True)
class Presentation:
    """What :func:`textxai.inconsistency.analyse` draws and writes besides the numbers: ``figures`` (False: none,
    the evaluate module's cheap path), the report's ``title`` and how many chains it shows (``max_chains``)."""

    figures: bool = True
    title: str = "Inconsistency"
    max_chains: int = 2


def editor_options(options) -> dict:
    """The keywords of the chosen built-in editor (:func:`textxai.editors.get_editor`): the deletion baseline takes
    only ``max_words`` (default ``n_words``), the LLM editor its ``editor_model`` (default the packaged LM), the
    substitution editor its four sizes. ``options``: an :class:`EditorOptions`, parsed ``textxai run`` arguments
    or a mapping of them (:meth:`textxai.registry.Method.run_options`).

    >>> editor_options(EditorOptions(editor="llm"))
    {'lm': 'textxai/smollm2-135m-instruct', 'num_candidates': 4, 'prompt': 'ceval'}
    >>> editor_options(EditorOptions(max_words=4))
    {'n_words': 3, 'n_neighbours': 30, 'n_substitutes': 3, 'max_words': 4}
    """
    defaults = EditorOptions()

    def get(name):
        if isinstance(options, Mapping):
            return options.get(name, getattr(defaults, name))
        return getattr(options, name, getattr(defaults, name))

    if get("editor") == "llm":
        from textxai.lm import PACKAGED_LM

        return {"lm": get("editor_model") or PACKAGED_LM, "num_candidates": get("editor_candidates"),
                "prompt": get("editor_prompt")}
    if get("editor") == "deletion":
        return {"max_words": get("max_words") if get("max_words") is not None else get("n_words")}
    return {"n_words": get("n_words"), "n_neighbours": get("n_neighbours"), "n_substitutes": get("n_substitutes"),
            "max_words": get("max_words")}
