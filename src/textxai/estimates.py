"""Work a request implies, estimated BEFORE it runs: the cost formulas of the built-in methods and editors, read
by each method's descriptor (its ``estimate``, which ``textxai run --max-evaluations`` calls through
:func:`for_run`), by the Space handlers (:func:`textxai.spaces.check_budget`) and by the audit's plan.

A *model evaluation* is one input row through a network: the classifier (a prediction, a masked or sampled
text, one backward pass), the MiniLM sentence embedder of a similarity filter, or a language model. Each
estimate answers in milliseconds (no model, no spaCy: words are counted by :func:`approx_words`) and errs
on the side of more work; the counting budget of :func:`textxai.batching.work_budget` stays the backstop.

>>> attribution_evaluations("omission", 10)
11
>>> check_evaluations(500, 1000, "textxai run naopc")
500
>>> check_evaluations(5000, 1000, "textxai run naopc", "use --limit")
Traceback (most recent call last):
...
ValueError: --max-evaluations 1,000: textxai run naopc needs about 5,000 model evaluations (estimated before any model call) — use --limit, or raise --max-evaluations
"""
from __future__ import annotations

import functools
import inspect
import math
import re
from collections.abc import Sequence

_WORDISH = re.compile(r"\w+|[^\w\s]")


def approx_words(text: str) -> int:
    """Words and punctuation marks of ``text`` (close to the spaCy word count, without loading spaCy).

    >>> approx_words("A wonderful, moving film.")
    6
    """
    return len(_WORDISH.findall(text)) if isinstance(text, str) else 0


def attribution_evaluations(method: str | None, n_words: int, samples: int | None = None) -> int:
    """Evaluations of one word attribution by ``method`` (read from the attribution registry; LIME: the distinct
    masks among its samples, :func:`textxai.attribution.lime_distinct_masks`; the sampling methods also the two
    rows of the classifier's once-only bfloat16 probe, ``TextClassifier.resolve_precision``; ``None``: the
    attributions are given, 0; an unknown name: 50).

    >>> [attribution_evaluations(m, 10) for m in ("omission", "lime", "kernel_shap", None)]
    [11, 997, 1002, 0]
    >>> attribution_evaluations("lime", 40), attribution_evaluations("lime", 3)
    (4918, 10)
    """
    if method is None:
        return 0
    from textxai.attribution import REGISTRY, lime_distinct_masks

    name = str(method).split(" ")[0].lower()
    entry = REGISTRY.get(name)
    if entry is None:
        return 50
    drawn = entry.evaluations(n_words, samples)
    if name == "lime":  # identical masks are evaluated once: the expected distinct ones, 5 % margin
        drawn = min(drawn, 2 ** n_words, math.ceil(1.05 * lime_distinct_masks(n_words, drawn)))
    return drawn + (2 if entry.family == "sampling" else 0)


# --------------------------------------------------------------------------- the built-in methods' cost formulas
@functools.lru_cache(maxsize=1)
def _editor_defaults() -> tuple[dict, int]:
    """The built-in editor's option defaults (read from its signature) and the longest antonym list."""
    from textxai.editors import SubstitutionEditor, antonyms

    params = inspect.signature(SubstitutionEditor.__init__).parameters
    defaults = {k: params[k].default for k in ("n_words", "n_substitutes", "max_words", "n_neighbours")}
    return defaults, max((len(v) for v in antonyms().values()), default=0)


def editor_evaluations(n: int, n_words: int | None = None, n_substitutes: int | None = None,
                       max_words: int | None = None, n_neighbours: int | None = None) -> tuple[int, int]:
    """One call of the built-in editor (:class:`textxai.editors.SubstitutionEditor`; an option left at
    ``None`` takes the editor's default) on a text of ``n`` words: ``(model evaluations, most candidates)``.

    From the editor's code: the occlusion importance is one masked-prediction row per word plus the intact
    text (n + 1); each of the ``k = min(n, max(n_words, max_words))`` words it replaces is tried with every
    replacement, its listed antonyms (at most the longest list of ``data/antonyms.txt``) and up to
    ``n_neighbours`` GloVe words (looked up, not a model evaluation), each edited text predicted once; of the
    candidates, at most ``k n_substitutes`` single replacements and ``min(n, max_words) - 1`` cumulative
    ones, none left when none is kept, the MiniLM similarity filter embeds the text and each (1 + candidates).

    >>> editor_evaluations(10)   # 11 occlusion rows, 3 x (10 + 30) replacements, 1 + 11 MiniLM rows
    (143, 11)
    >>> editor_evaluations(1), editor_evaluations(4, n_words=1, max_words=1)
    ((46, 3), (49, 3))
    """
    defaults, longest_antonyms = _editor_defaults()
    n_words = defaults["n_words"] if n_words is None else n_words
    n_substitutes = defaults["n_substitutes"] if n_substitutes is None else n_substitutes
    n_neighbours = defaults["n_neighbours"] if n_neighbours is None else n_neighbours
    max_words = n_words if max_words is None else max_words
    replaced = min(n, max(n_words, max_words))
    candidates = replaced * n_substitutes + max(0, min(n, max_words) - 1)
    work = (n + 1) + replaced * (longest_antonyms + n_neighbours) + (1 + candidates if candidates else 0)
    return int(work), int(candidates)


def deletion_evaluations(n: int, max_words: int | None = None) -> tuple[int, int]:
    """One call of the word-deletion editor (:class:`textxai.editors.DeletionEditor`, CEval's baseline) on a
    text of ``n`` words: ``(model evaluations, most candidates)``. From its code: the intact text once, then
    each of ``m = min(max_words, n - 1)`` greedy steps predicts every remaining single deletion
    (n, n - 1, ...); candidates: the n single deletions and the m texts of the greedy path.

    >>> deletion_evaluations(10), deletion_evaluations(1)
    ((28, 13), (0, 0))
    """
    if n < 2:
        return 0, 0
    m = min(_deletion_default() if max_words is None else max_words, n - 1)
    return int(1 + sum(n - s for s in range(m))), int(n + m)


def _deletion_default() -> int:
    """The deletion editor's default ``max_words`` (read from its signature)."""
    from textxai.editors import DeletionEditor

    return int(inspect.signature(DeletionEditor.__init__).parameters["max_words"].default)


#: Tokens per word of a subword tokenizer, on the safe side (English BPE: ~1.3).
TOKENS_PER_WORD = 1.5


def llm_edit_evaluations(n: int, candidates: int = 1) -> tuple[int, int]:
    """One text of ``n`` words edited by the LLM editor (:class:`textxai.llm_editor.LLMEditor`) asked for
    ``candidates`` rewrites: ``(model evaluations, most candidates)``. One prediction (its label and target), then per
    candidate the prompt's forward pass and one evaluation per new token it may generate
    (:func:`textxai.lm.new_token_limit` of ~1.5 tokens a word), and with more than one candidate one prediction each
    to rank them (the classifier chooses).

    >>> llm_edit_evaluations(10), llm_edit_evaluations(10, 4)
    ((33, 1), (133, 4))
    """
    from textxai.lm import new_token_limit
    from textxai.validation import check_positive_int

    check_positive_int(candidates, "candidates")
    params = inspect.signature(new_token_limit).parameters
    tokens = math.ceil(TOKENS_PER_WORD * n)
    new = min(params["cap"].default, math.ceil(params["factor"].default * tokens) + params["extra"].default)
    return int(1 + candidates * (1 + new) + (candidates if candidates > 1 else 0)), candidates


def judge_evaluations(n_texts: int, method: str = "probabilities", max_new_tokens: int = 32) -> int:
    """The LLM judge on ``n_texts`` texts: CEval's four aspects, one forward pass each when read from its probabilities
    (:func:`textxai.ceval.judge.probability_scores`), a prompt pass and up to ``max_new_tokens`` steps with ``"generate"``.

    >>> judge_evaluations(10), judge_evaluations(10, "generate")
    (40, 1320)
    """
    return int(4 * n_texts * (1 + (max_new_tokens if method == "generate" else 0)))


def one_edit(editor: str, n: int, max_words: int | None = None, **substitution_options) -> tuple[int, int]:
    """``(model evaluations, most candidates)`` of one call of the built-in editor named ``editor``
    ("substitution" or its former name, "deletion", "llm") on a text of ``n`` words."""
    if editor == "deletion":
        return deletion_evaluations(n, max_words)
    if editor == "llm":
        return llm_edit_evaluations(n, substitution_options.get("candidates") or 1)
    return editor_evaluations(n, max_words=max_words, **substitution_options)


# --------------------------------------------------------------------------- the CLI: its arguments -> the descriptor's estimate
def _words(texts) -> list[int]:
    return [approx_words(t) for t in texts or ()]


def for_run(module: str, args, texts: Sequence[str], text_pairs: Sequence[str] | None, classifier=None) -> int:
    """The estimate of ``textxai run <module>`` from its command-line arguments and data (read, not run): the
    method's descriptor's ``estimate`` (:mod:`textxai.registry`) on the words per text (pairs summed) and its
    options (the option groups' defaults overlaid with ``args``, :meth:`textxai.registry.Method.run_options`).

    ``classifier`` (loaded, not called) gives the number of classes and the device; without it, 2 and CPU.
    """
    from textxai import registry

    method = registry.get(module)
    if method.estimate is None:
        raise ValueError(f"module={module!r}: the method has no work estimate (its descriptor's estimate is None); "
                         "run it without --max-evaluations")
    words = _words(texts) if text_pairs is None else [a + b for a, b in zip(_words(texts), _words(text_pairs))]
    num_labels = int(getattr(classifier, "num_labels", 2) or 2)
    device = getattr(classifier, "device", "cpu")
    return int(method.estimate(words, method.run_options(args), num_labels=num_labels, device=device,
                               pairs=text_pairs is not None))


def check_evaluations(evaluations: int, limit: int | None, what: str, hint: str = "",
                      flag: str = "--max-evaluations") -> int:
    """``evaluations`` when within ``limit`` (``None``: no limit), else a ``ValueError`` naming ``flag`` and the
    estimate — raised before any model call."""
    if limit is not None and evaluations > limit:
        advice = f"{hint}, or raise {flag}" if hint else f"ask for less work or raise {flag}"
        raise ValueError(f"{flag} {limit:,}: {what} needs about {evaluations:,} model evaluations "
                         f"(estimated before any model call) — {advice}")
    return int(evaluations)
