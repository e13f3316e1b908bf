"""Counterfactual editors: callables ``list[str] -> list[list[str]]`` (candidate edits per input text).

:class:`SubstitutionEditor` is a white-box word-substitution editor built on a
:class:`textxai.classifier.TextClassifier`, in the family of TextFooler (Jin et al., 2020) and the
lexicon-guided counterfactual editors: it replaces the words the model relies on with words of the other
class.

1. **which words**: occlusion -- each word of the text is masked (the mask token on all its subwords, as the
   metrics perturb) and the drop of log p(current class) is its importance; the ``n_words`` most important
   words (importance > 0) that have replacements are the ones to replace: words leaning to the current
   class (GloVe, see :meth:`SubstitutionEditor.class_lean`) and words with listed antonyms;
2. **by what**: a word's replacements are its antonyms (``data/antonyms.txt``: "wonderful" -> "awful") and
   its GloVe neighbours from :class:`SubstituteGenerator` (shared with the TOKI attack; never a stop word
   or a form of the same word), kept when they have the word's grammatical form (:func:`same_form`: no
   "charming" -> "delightfully") and can play its part of speech (:func:`textxai.words.same_part_of_speech`:
   no "design" -> "faulty"). Each replacement is scored by the classifier itself, on the edited text: the gain
   of the margin ``log p(target) - log p(current)``, ``target`` the runner-up class of the input
   (or the class given). Only replacements with a positive gain are kept, ranked: flips the prediction
   first, antonyms first, larger gain first (``n_substitutes`` per word);
3. **candidates**: every single replacement, then the cumulative edits that replace the 2, 3, ...
   ``max_words`` most important words by their best replacement each (larger edits, so inc@n > 2 is
   possible); candidates whose MiniLM sentence cosine with the input is below ``min_similarity`` are dropped.

:func:`textxai.inconsistency.feedback_chains` asks the classifier and picks the smallest flipping candidate.
A text with no usable replacement gets no candidate (the feedback chain stops there). Everything is
deterministic (no sampling) and computed one text at a time (independent of batching).

The substitute generator and its lexicon (antonyms, stop words) are :mod:`textxai.substitutes` (re-exported here);
this module holds the editors that score replacements with the classifier, and the editors' registry
(:data:`EDITORS`, :func:`get_editor`).

>>> from textxai.editors import EDITORS
>>> sorted(EDITORS)
['deletion', 'llm', 'substitution']
>>> editor = SubstitutionEditor("textxai/demo-sentiment")
>>> editor(["The plot is dull and the acting is lifeless."])[0][:3]
['The plot is dull and the acting is lively.', 'The plot is dull and the acting is vibrant.', 'The plot is exciting and the acting is lifeless.']
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from textxai.deprecation import renamed, warn_renamed
from textxai.llm_editor import LLMEditor
from textxai.progress import progress_bar
from textxai.substitutes import (SubstituteGenerator, _match_case, _same_stem, _stop_words, antonym_pairs,  # noqa: F401
                                 antonyms, editor_generator, shared_generator)  # (re-exported: the generator's names)
from textxai.validation import short_repr, check_positive_int, check_texts
from textxai.words import parts_of_speech, same_part_of_speech


@dataclass(frozen=True)
class Substitution:
    """One proposed replacement: word ``index`` (``word`` at characters ``start:end``) -> ``substitute``.

    ``gain``: how much the replacement raises ``log p(target) - log p(current)`` (measured by the model on
    the edited text); ``flips``: the edited text's prediction is no longer the current class;
    ``antonym``: the replacement is a listed antonym; ``importance``: the word's occlusion importance.
    """

    index: int
    word: str
    start: int
    end: int
    substitute: str
    gain: float
    flips: bool
    antonym: bool
    importance: float


#: Replacements come from this many most frequent GloVe words, at least this similar (cosine) to the word.
VOCABULARY_SIZE = 20000
MIN_WORD_SIMILARITY = 0.4
#: Endings that mark a grammatical form; a replacement must share the word's (see :func:`same_form`).
FORM_ENDINGS = ("ly", "ing", "ed", "est", "er", "s")


def _form(word: str) -> tuple[bool, ...]:
    w = word.lower()
    return tuple(w.endswith(e) and len(w) > len(e) + 2 and not (e == "s" and w.endswith(("ss", "us", "is")))
                 for e in FORM_ENDINGS)


def same_form(word: str, replacement: str) -> bool:
    """Whether ``replacement`` can stand where ``word`` stands: both or neither end in -ly, -ing, -ed, -est,
    -er, plural -s (a cheap stand-in for a part-of-speech check; GloVe neighbours mix forms freely).

    >>> same_form("charming", "delightful"), same_form("boring", "exciting"), same_form("wonderful", "awful")
    (False, True, True)
    >>> same_form("actors", "actor"), same_form("slowly", "quickly")
    (False, True)
    """
    return _form(word) == _form(replacement)



@dataclass(frozen=True)
class ClassFilter:
    """Which words the editor replaces and by what, beyond the model's own verdict (readable edits).

    ``class_names``: class descriptions (anchor words per class, as TOKI's ``class_names``); default: the
    label names, or the anchors shipped for the demo models. ``min_lean``: how much closer (GloVe cosine) to
    the target class's anchors than to the current class's a replacement must be, and to the current
    class's a replaced word (listed antonyms are exempt). ``neighbour_pos``: parts of speech (universal
    tags) in which GloVe neighbours may replace a word (both words must be able to play one of them);
    listed antonyms replace any word. The default ``("ADJ", "ADV")`` keeps edits readable on sentiment
    ("stunning" -> "dreary", never "design" -> "faulty"); ``None`` allows every part of speech (e.g. nouns
    for topic classifiers).
    """

    class_names: object = None
    min_lean: float = 0.08
    neighbour_pos: object = ("ADJ", "ADV")


class SubstitutionEditor:
    """Occlusion-guided word substitution toward the other class (see the module docstring).

    Args:
        classifier: a TextClassifier or anything :func:`textxai.classifier.as_classifier` accepts.
        n_words: how many of the most important words get replacements.
        max_words: the most words one candidate changes (cumulative edits of the best replacement of the
            2, 3, ... ``max_words`` most important words); default ``n_words``; larger values make larger
            edits (and inc@n > 2 possible).
        n_neighbours: GloVe neighbours considered per word (:class:`SubstituteGenerator`).
        n_substitutes: replacements kept per word.
        min_similarity: candidates whose MiniLM sentence cosine with the input is below this are dropped.
        target: the class to edit toward (index or label name); default: the runner-up class of each text.
        progress: show a progress bar over the texts of each call.
        precision: of the editor's forward passes ("float32", "bfloat16" or "auto", see
            ``TextClassifier.resolve_precision``).
        class_filter: a :class:`ClassFilter`; its fields may also be given as keywords (``class_names``,
            ``min_lean``, ``neighbour_pos``).

    Calling the editor on a list of texts returns one list of candidate texts per input (possibly empty).
    """

    name = "substitution"

    def __init__(self, classifier, n_words: int = 3, n_neighbours: int = 30, n_substitutes: int = 3,
                 progress: bool = False, max_words: int | None = None, min_similarity: float = 0.6, target=None,
                 class_filter: ClassFilter | None = None, precision: str = "float32", **filter_options):
        from textxai.classifier import as_classifier
        from textxai.options import apply_keywords

        class_filter = apply_keywords("SubstitutionEditor", filter_options,
                                      class_filter=(ClassFilter, class_filter))["class_filter"]
        class_names, min_lean = class_filter.class_names, class_filter.min_lean

        self.classifier = as_classifier(classifier).require_single_label("the counterfactual editor (flips the "
                                                                          "predicted class to another, exclusive one)")
        self.n_words = check_positive_int(n_words, "n_words")
        self.max_words = check_positive_int(max_words if max_words is not None else n_words, "max_words")
        self.n_words = max(self.n_words, self.max_words)
        self.n_neighbours = check_positive_int(n_neighbours, "n_neighbours")
        self.n_substitutes = check_positive_int(n_substitutes, "n_substitutes")
        if isinstance(min_similarity, bool) or not isinstance(min_similarity, (int, float)) or not -1 <= min_similarity <= 1:
            raise ValueError(f"min_similarity={short_repr(min_similarity)}: expected a number in [-1, 1]")
        self.min_similarity = float(min_similarity)
        self.target = None if target is None else self.classifier.class_index(target, "target")
        self.progress = bool(progress)
        self.precision = self.classifier.resolve_precision(precision)
        self.generator = editor_generator()
        self.class_names = class_names
        if isinstance(min_lean, bool) or not isinstance(min_lean, (int, float)) or not 0 <= min_lean <= 1:
            raise ValueError(f"min_lean={short_repr(min_lean)}: expected a number in [0, 1]")
        self.min_lean = float(min_lean)
        self.neighbour_pos = _check_parts_of_speech(class_filter.neighbour_pos)

    def __repr__(self) -> str:
        return (f"SubstitutionEditor({self.classifier!r}, n_words={self.n_words}, max_words={self.max_words}, "
                f"n_neighbours={self.n_neighbours}, n_substitutes={self.n_substitutes})")

    # ------------------------------------------------------------------ one text
    def _replacements(self, word: str, target: int, current: int) -> list[tuple[str, bool]]:
        """(replacement, is an antonym) of one word: its antonyms, then the common words closest to it in GloVe
        among those that lean toward the target class (:meth:`class_lean` >= ``min_lean``; without class
        names: its plain GloVe neighbours), of the same form, never a stop word or a form of the word."""
        listed = [_match_case(word, a) for a in antonyms().get(word.lower(), ())]
        if self._anchors is None:
            near = [w for w, _ in self.generator(word, self.n_neighbours)]
        else:
            near = [_match_case(word, w) for w in self._directed_neighbours(word.lower(), target, current)]
        near = [w for w in near if same_form(word, w) and same_part_of_speech(word, w) and w not in listed]
        if self.neighbour_pos is not None:  # neighbours only where both can be a modifier (ADJ/ADV by default)
            near = [w for w in near if parts_of_speech(word) & parts_of_speech(w) & self.neighbour_pos]
        return [(w, True) for w in listed] + [(w, False) for w in near]

    @functools.cached_property
    def _vocabulary(self) -> tuple[list[str], np.ndarray]:
        """The common GloVe words replacements are drawn from (no stop words) and their unit vectors."""
        from textxai.toki.core import normalize_rows

        stop = _stop_words()
        words = [w for w in self.generator.glove.vocabulary()[:VOCABULARY_SIZE] if w not in stop]
        return words, normalize_rows(self.generator.glove.embed(words))

    @functools.lru_cache(maxsize=None)
    def _vocabulary_lean(self, target: int, current: int) -> np.ndarray:
        _, unit = self._vocabulary
        return unit @ self._anchors[target] - unit @ self._anchors[current]

    def _directed_neighbours(self, word: str, target: int, current: int) -> list[str]:
        glove = self.generator.glove
        if not word.isalpha() or word in _stop_words() or not glove.known(word):
            return []
        from textxai.toki.core import normalize_rows

        words, unit = self._vocabulary
        sims = unit @ normalize_rows(glove.embed([word]))[0]
        eligible = np.flatnonzero((self._vocabulary_lean(target, current) >= self.min_lean)
                                  & (sims >= MIN_WORD_SIMILARITY))
        out = []
        for j in eligible[np.argsort(-sims[eligible], kind="stable")]:
            if words[j] != word and not _same_stem(words[j], word):
                out.append(words[j])
                if len(out) == self.n_neighbours:
                    break
        return out

    def importance(self, text: str) -> tuple[list[tuple[str, int, int]], np.ndarray, np.ndarray]:
        """Words ``(word, start, end)``, the text's class probabilities and each word's occlusion importance:
        log p(current) minus log p(current) with the word masked."""
        from textxai.attribution import word_attributions

        clf = self.classifier
        n = clf.word_encoding(text).n_words
        spans = _spans(text, clf)[:n]
        probs = clf.predict_proba([text], precision=self.precision)[0]
        current = int(probs.argmax())
        # the omission explanation of the predicted class, p(x) - p(x without word i): remembered per text, so a
        # text TOKI or the audit explained already costs no forward pass here
        drop = word_attributions([text], clf, "omission", target=current, precision=self.precision)[0][:n]
        masked = np.clip(probs[current] - drop, 1e-300, None)
        return spans, probs, float(np.log(max(probs[current], 1e-300))) - np.log(masked)

    @functools.cached_property
    def _anchors(self) -> np.ndarray | None:
        """One unit GloVe vector per class (mean of its anchor words), None when the classes have no names."""
        from textxai.toki.core import normalize_rows
        from textxai.toki.index import resolve_class_anchors

        try:
            _, anchors = resolve_class_anchors(self.classifier, self.class_names)
        except ValueError:
            if self.class_names is not None:
                raise
            return None
        glove = self.generator.glove
        rows = []
        for c in range(self.classifier.num_labels):
            known = [w.lower() for w in anchors[c] if glove.known(w.lower())]
            if not known:
                return None
            rows.append(normalize_rows(glove.embed(known)).mean(0))
        return normalize_rows(np.array(rows))

    def class_lean(self, words: list[str], target: int, current: int) -> np.ndarray:
        """cos(word, target class) - cos(word, current class) in GloVe, each class the mean of its anchor words
        (TOKI's class descriptions: the label names, or the anchors shipped for the demo models); 0 for words
        GloVe does not know; all 0 when the model's labels are generic (LABEL_0...): then the editor does not
        filter words by class.

        >>> ed = SubstitutionEditor("textxai/demo-sentiment")
        >>> [round(float(x), 2) > 0 for x in ed.class_lean(["brilliant", "stupid"], 1, 0)]
        [True, False]
        """
        anchors = self._anchors
        if anchors is None:
            return np.zeros(len(words))
        from textxai.toki.core import cosine_matrix

        glove = self.generator.glove
        known = [w.lower() for w in words if glove.known(w.lower())]
        out = np.zeros(len(words))
        if known:
            sims = cosine_matrix(glove.embed(known), anchors[[target, current]])
            lean = dict(zip(known, sims[:, 0] - sims[:, 1]))
            out = np.array([lean.get(w.lower(), 0.0) for w in words])
        return out

    def substitutions(self, text: str) -> list[list[Substitution]]:
        """For each chosen word (most important first), its replacements, best first."""
        check_texts([text], "text")
        if not text.strip():
            return []
        spans, probs, importance = self.importance(text)
        current = int(probs.argmax())
        target = self.target if self.target is not None and self.target != current else \
            int(np.argsort(-probs, kind="stable")[1])

        def leaning(words):  # > 0: the word is closer to the target class's anchor words than to the current's
            return self.class_lean(words, target, current)

        words = [w for w in range(min(len(spans), len(importance))) if importance[w] > 0 and spans[w][0].isalpha()]
        class_word = dict.fromkeys(words, True)  # leans to the current class: any replacement, else antonyms only
        if words and self._anchors is not None:  # words of the current class (no filter without class names)
            class_word = {w: lean <= -self.min_lean for w, lean in zip(words, leaning([spans[w][0] for w in words]))}
            words = [w for w in words if class_word[w] or spans[w][0].lower() in antonyms()]
        words.sort(key=lambda w: (-importance[w], w))
        chosen = []
        for w in words:
            options = self._replacements(spans[w][0], target, current)
            if options and self._anchors is not None:  # replacements of the target class (antonyms are)
                lean = leaning([r for r, _ in options])
                options = [o for o, x in zip(options, lean) if o[1] or (class_word[w] and x >= self.min_lean)]
            if options:
                chosen.append((w, options))
            if len(chosen) == self.n_words:
                break
        if not chosen:
            return []
        edited = [_apply(text, [(spans[w][1], spans[w][2], r)]) for w, options in chosen for r, _ in options]
        logp = np.log(np.clip(self.classifier.predict_proba(edited, precision=self.precision), 1e-300, None))
        margin0 = float(np.log(probs[target]) - np.log(probs[current]))
        out, row = [], 0
        for w, options in chosen:
            subs = []
            for r, is_antonym in options:
                gain = float(logp[row, target] - logp[row, current]) - margin0
                flips = int(logp[row].argmax()) != current
                row += 1
                if gain > 0:
                    subs.append(Substitution(w, spans[w][0], spans[w][1], spans[w][2], r, gain, flips, is_antonym,
                                             float(importance[w])))
            subs.sort(key=lambda s: not s.flips)  # stable: antonyms, then by similarity to the word
            if subs:
                out.append(subs[: self.n_substitutes])
        return out

    def candidates(self, text: str) -> list[str]:
        """Candidate edits of one text: single replacements, then the cumulative best replacements of the
        2 .. ``max_words`` most important words; those below ``min_similarity`` (MiniLM) dropped."""
        per_word = self.substitutions(text)
        out = [_apply(text, [(s.start, s.end, s.substitute)]) for subs in per_word for s in subs]
        for k in range(2, min(len(per_word), self.max_words) + 1):
            out.append(_apply(text, [(subs[0].start, subs[0].end, subs[0].substitute) for subs in per_word[:k]]))
        unique = list(dict.fromkeys(c for c in out if c != text))
        sims = self.generator.similar_texts(text, unique, self.min_similarity)
        return [c for c, s in zip(unique, sims) if s is not None]

    def __call__(self, texts) -> list[list[str]]:
        texts = check_texts(texts)
        return [self.candidates(t) for t in progress_bar(texts, self.progress, "editor", unit="text")]


PARTS_OF_SPEECH = ("ADJ", "ADV", "NOUN", "VERB", "PROPN", "NUM")


def _check_parts_of_speech(value) -> frozenset | None:
    if value is None:
        return None
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple, set, frozenset)) or not items or \
            any(not isinstance(v, str) or v.upper() not in PARTS_OF_SPEECH for v in items):
        raise ValueError(f"neighbour_pos={short_repr(value)}: expected None or a list of parts of speech from "
                         f"{list(PARTS_OF_SPEECH)}")
    return frozenset(v.upper() for v in items)


def _spans(text: str, clf) -> list[tuple[str, int, int]]:
    from textxai.words import word_spans

    return word_spans(text, clf.word_tokenizer)


def _apply(text: str, replacements: list[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end, new)`` span replaced (spans do not overlap)."""
    for start, end, new in sorted(replacements, reverse=True):
        text = text[:start] + new + text[end:]
    return text


class DeletionEditor:
    """A word-deletion baseline editor (CEval's deletion baseline, :func:`textxai.ceval.baselines.deletion_candidates`):
    candidates delete the words whose removal most lowers p(current class), greedily, up to ``max_words``.

    It cannot put back what it deleted, so fed its own edit it usually needs a larger one: a reference point
    for inc@n (the substitution editor restores a word in one step).
    """

    name = "deletion"

    def __init__(self, classifier, max_words: int = 3, progress: bool = False, batch_size: int = 32,
                 precision: str = "float32"):
        from textxai.classifier import as_classifier

        self.classifier = as_classifier(classifier).require_single_label("the counterfactual editor (flips the "
                                                                          "predicted class to another, exclusive one)")
        self.max_words = check_positive_int(max_words, "max_words")
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.progress = bool(progress)
        self.precision = self.classifier.resolve_precision(precision)

    def __repr__(self) -> str:
        return f"DeletionEditor({self.classifier!r}, max_words={self.max_words})"

    def __call__(self, texts) -> list[list[str]]:
        from textxai.ceval.baselines import deletion_candidates

        return deletion_candidates(texts, self.classifier, max_words=self.max_words, batch_size=self.batch_size,
                                   progress=self.progress, precision=self.precision)


#: Built-in editors by name.
EDITORS = {"substitution": SubstitutionEditor, "deletion": DeletionEditor, "llm": LLMEditor}
#: The names of the built-in editors (what a menu offers).
EDITOR_NAMES = tuple(EDITORS)
#: Former editor names :func:`get_editor` still accepts for one release, with a DeprecationWarning (CHANGELOG.md).
RENAMED_EDITORS = {"gradient_substitution": "substitution"}

__getattr__ = renamed(__name__, {"GradientSubstitutionEditor": "SubstitutionEditor"})  # the former class name warns


def get_editor(editor, classifier=None, **options):
    """An editor from a name in :data:`EDITORS` (built on ``classifier``) or any callable, returned as is."""
    if callable(editor) and not isinstance(editor, str):
        return editor
    if isinstance(editor, str) and editor in RENAMED_EDITORS:
        warn_renamed(f"editor={editor!r}", f"editor={RENAMED_EDITORS[editor]!r}", "the same editor")
        editor = RENAMED_EDITORS[editor]
    if not isinstance(editor, str) or editor not in EDITORS:
        raise ValueError(f"editor={short_repr(editor)}: expected a callable list[str] -> list[list[str]] or one of {sorted(EDITORS)}")
    if classifier is None:
        raise ValueError(f"classifier=None: the built-in editor {editor!r} needs a classifier")
    return EDITORS[editor](classifier, **options)
