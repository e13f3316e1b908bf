"""Work a request implies, estimated BEFORE it runs: the cost formulas of the built-in methods and editors, read
by each method's descriptor (its ``estimate``, which ``textxai run --max-evaluations`` calls through
:func:`for_run`), by the Space handlers (:func:`textxai.spaces.check_budget`) and by the audit's plan.

A *model evaluation* is one input row through a network: the classifier (a prediction, a masked or sampled
text, one backward pass), the MiniLM sentence embedder of a similarity filter, or a language model. Each
estimate answers in milliseconds (no model, no spaCy: words are counted by :func:`approx_words`) and errs
on the side of more work; the counting budget of :func:`textxai.batching.work_budget` stays the backstop.

>>> naopc_evaluations([10]), naopc_evaluations([80], "auto", beam_size=20)
(1094, 129810)
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
def naopc_evaluations(n_words: Sequence[int], normalization: str = "auto", beam_size: int | None = None,
                      max_exact_words: int = 12, method="integrated_gradients", samples: int | None = None) -> int:
    """NAOPC for texts of ``n_words`` words: per attribution ``method`` (a name, a list of names, or ``None``
    when the attributions are given) the explanation and both AOPC curves (2 n); once per text the limits —
    exact (2^n subsets) where :func:`textxai.naopc.texts.limit_method` picks exact, else two beams of B states
    over n steps (about B n (n + 1); B from ``beam_size`` or the method's default).

    >>> naopc_evaluations([3], "auto", 5, 12, "omission"), naopc_evaluations([3], "none", method=["lime", "gradient"])
    (18, 23)
    """
    from textxai.naopc.limits import DEFAULT_BEAM_SIZE
    from textxai.naopc.texts import limit_method

    methods = [method] if method is None or isinstance(method, str) else list(method)
    total = 0
    for n in n_words:
        total += sum(attribution_evaluations(m, n, samples) + 2 * n for m in methods)
        kind = limit_method(n, normalization, max_exact_words)
        if kind == "none":
            continue
        beam = beam_size or DEFAULT_BEAM_SIZE.get(kind, 1)
        total += 2 ** n if kind == "exact" else beam * n * (n + 1)
    return int(total)


def toki_evaluations(train_words: Sequence[int], text_words: Sequence[int], explainer: str,
                     samples: int | None = None, index_cached: bool = False, attack_words: Sequence[int] = (),
                     max_rate: float = 0.1, min_words: int = 2, n_candidates: int = 5, width: int = 3) -> int:
    """TOKI: one prediction and one explanation per training text (unless its keyword index is cached) and per
    assessed text; per attacked text of n words a gradient, the substitutes of its words (1 + 30 MiniLM rows
    per word) and, at each greedy step, ``width`` x ``n_candidates`` edits (predicted and compared with
    MiniLM), over at most n / width + max(min_words, rate n) steps.

    >>> toki_evaluations([10, 20], [5], "omission"), toki_evaluations([10], [5], "lime", 500, index_cached=True)
    (41, 35)
    >>> toki_evaluations([], [], "omission", attack_words=[9])
    430
    """
    texts = list(text_words) + ([] if index_cached else list(train_words))
    total = sum(attribution_evaluations(explainer, n, samples) + 1 for n in texts)
    for n in attack_words:  # + the substitutes of each word ranked by MiniLM over its GloVe neighbours
        steps = math.ceil(n / width) + max(min_words, int(max_rate * n))
        total += 1 + 2 * steps * width * n_candidates + (1 + _generator_neighbours()) * n
    return int(total)


def _generator_neighbours() -> int:
    """GloVe neighbours the shared substitute generator ranks per word (its default, read from its signature)."""
    from textxai.editors import SubstituteGenerator

    return int(inspect.signature(SubstituteGenerator.__init__).parameters["n_neighbours"].default)


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


def llm_edit_evaluations(n: int) -> tuple[int, int]:
    """One text of ``n`` words edited by the LLM editor (:class:`textxai.llm_editor.LLMEditor`): ``(model
    evaluations, most candidates)``. One prediction (its label and target), the prompt's forward pass, and one
    evaluation per new token it may generate (:func:`textxai.lm.new_token_limit` of ~1.5 tokens a word);
    at most one candidate.

    >>> llm_edit_evaluations(10)
    (33, 1)
    """
    from textxai.lm import new_token_limit

    params = inspect.signature(new_token_limit).parameters
    tokens = math.ceil(TOKENS_PER_WORD * n)
    new = min(params["cap"].default, math.ceil(params["factor"].default * tokens) + params["extra"].default)
    return int(2 + new), 1


def one_edit(editor: str, n: int, max_words: int | None = None, **substitution_options) -> tuple[int, int]:
    """``(model evaluations, most candidates)`` of one call of the built-in editor named ``editor``
    ("substitution" or its former name, "deletion", "llm") on a text of ``n`` words."""
    if editor == "deletion":
        return deletion_evaluations(n, max_words)
    if editor == "llm":
        return llm_edit_evaluations(n)
    return editor_evaluations(n, max_words=max_words, **substitution_options)


def feedback_evaluations(text_words: Sequence[int], steps: int, n_words: int | None = None,
                         n_substitutes: int | None = None, max_words: int | None = None,
                         n_neighbours: int | None = None, editor: str = "substitution") -> int:
    """Inconsistency feedback chains with a built-in editor: per text one prediction, then per step one
    editor call on the chain's last text (:func:`editor_evaluations`, :func:`deletion_evaluations`; an edit
    never adds words) and one prediction per candidate it returns.

    >>> feedback_evaluations([10, 40], steps=2) > feedback_evaluations([10, 40], steps=2, editor="deletion")
    True
    """
    total = 0
    for n in text_words:
        work, candidates = one_edit(editor, n, max_words, n_words=n_words, n_substitutes=n_substitutes,
                                    n_neighbours=n_neighbours)
        total += 1 + steps * (work + candidates)
    return int(total)


def fim_evaluations(n_texts: int, num_labels: int = 2, min_flip: bool = False, max_strength: float = 6.0,
                    tol: float = 1e-3, random_flips: bool = False, trials: int = 20, shift_texts: int = 0) -> int:
    """FIM difficulty: per text one forward and C - 1 backward passes (C classes); the min-flip search adds
    that again and 1 + log2(max_strength / tol) forwards; random flips ``trials`` + 1; a shift file C per text.

    >>> fim_evaluations(10), fim_evaluations(10, min_flip=True, max_strength=6.0, tol=1e-2)
    (20, 150)
    """
    total = n_texts * num_labels + shift_texts * num_labels
    if min_flip:
        total += n_texts * (num_labels + 1 + max(1, math.ceil(math.log2(max_strength / tol))))
    if random_flips:
        total += n_texts * (trials + 1)
    return int(total)


def ceval_evaluations(n_originals: int, n_counterfactuals: int, generated_words: Sequence[int] = (),
                      lm: bool = False, judge: bool = False, max_new_tokens: int = 8,
                      editor: str = "substitution") -> int:
    """CEval: one prediction per original and per counterfactual; texts still to be edited by the built-in
    editor (``generated_words``) one ``editor`` call each (:func:`one_edit`), then the original and each
    candidate predicted to pick the counterfactuals; with ``lm`` one perplexity row per text; with ``judge``
    four prompts per counterfactual (one per quality aspect), each a prompt pass and ``max_new_tokens``
    generation steps.

    >>> ceval_evaluations(10, 20), ceval_evaluations(10, 20, lm=True, judge=True), ceval_evaluations(1, 2, [10])
    (30, 780, 158)
    """
    total = n_originals + n_counterfactuals
    for n in generated_words:
        work, candidates = one_edit(editor, n)
        total += work + 1 + candidates
    if lm:
        total += n_originals + n_counterfactuals
    if judge:
        total += 4 * (1 + max_new_tokens) * n_counterfactuals
    return int(total)


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
