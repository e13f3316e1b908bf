"""The shared shell of the textxai Gradio Spaces: safe model choice, input caps, escaping, layout, queue.

Every ``spaces/<name>/app.py`` builds its ``demo`` with these helpers::

    from textxai import spaces

    with spaces.space("NAOPC", module="naopc", paper_url=..., paper_title=...) as demo:
        model = spaces.model_dropdown()
        text = gr.Textbox(label="Texts, one per line")
        out = gr.HTML()
        gr.Button("Run").click(spaces.user_errors(run), [model, text], out)

Rules enforced here (issue 2, item 10):

- **Model choice**: the demo models (``"textxai/demo-sentiment"``, ``"textxai/demo-topic"``, built offline, they
  always work) or a Hub id ``owner/name``. A hosted Space (env ``SPACE_ID`` set) refuses local paths, and
  every model is loaded with ``trust_remote_code=False`` and ``use_safetensors=True`` (no pickled weights,
  no code from the model repo); before downloading, a hosted Space reads the Hub's metadata and refuses
  models without safetensors weights or with more than ``MAX_PARAMETERS`` parameters. A Hub id that
  cannot be reached gives a clear message instead of a stack trace. Loaded classifiers are cached.
- **Caps** on the number of texts and the characters per text, with messages that say what to do.
- **Escaping**: every user text rendered as HTML goes through :func:`escape` (``html.escape``); the
  messages of errors shown in the Gradio modal (which renders HTML) are escaped too.
- **Queue**: ``demo.queue(default_concurrency_limit=..., max_size=...)`` so a CPU Space serves requests
  one (or a few) at a time and turns away the excess with Gradio's "queue full" message.

>>> escape('<b>"hi"</b>')
'&lt;b&gt;&quot;hi&quot;&lt;/b&gt;'
>>> is_hub_id("textattack/bert-base-uncased-imdb"), is_hub_id("../secrets"), is_hub_id("/etc/passwd")
(True, False, False)
>>> check_inputs(["a fine film", ""], max_texts=5)
['a fine film', '']
"""
from __future__ import annotations

import dataclasses
import html
import math
import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import wraps
from pathlib import Path

import numpy as np

from textxai.extras import require

gr = require("gradio", "spaces", "textxai's Gradio Spaces")

from textxai import stats
from textxai.render import format_interval
from textxai.stats import IntervalOptions
from textxai import classifier
from textxai.classifier import DEMO_MODELS, TextClassifier, as_classifier
from textxai.loading import ModelRefused, SafeLoad, hub_not_found, hub_unreachable

DEFAULT_MODEL = DEMO_MODELS[0]
MAX_TEXTS = 20
MAX_CHARS = 2000
CONCURRENCY_LIMIT = 1
QUEUE_MAX_SIZE = 16
MAX_PARAMETERS = 500_000_000  # a hosted CPU Space refuses bigger Hub models (checked before downloading)
# Work per request (bench/space_rate.py): the demo MiniLM classifier makes 35-39 masked-text evaluations per CPU
# second for texts of 12-40 words (20 at 120 words) on this machine's AMD EPYC cores, measured under load
# (17-18/s of wall time at load average 10 on 2 cores). A free CPU Space has 2 vCPUs: ~70 evaluations/s.
# 60 s of work:
EVALUATIONS_PER_SECOND = 70
MAX_EVALUATIONS = int(os.environ.get("TEXTXAI_SPACE_MAX_EVALUATIONS", 60 * EVALUATIONS_PER_SECOND))
MAX_SECONDS = float(os.environ.get("TEXTXAI_SPACE_MAX_SECONDS", 90))  # wall time of one request, then it stops
MAX_OUTPUT_FILES = 32  # result files (CSV downloads) kept on disk; older ones are removed
MAX_UPLOAD_BYTES = 2_000_000  # an uploaded file above this is refused before it is read (and by the server: launch)
MAX_PASTE_CHARS = 500_000  # a pasted text box above this is refused before it is split into lines

PAPER_DEFAULT_URL = "https://github.com/textxai"
MODULE_URL = "https://huggingface.co/spaces/{namespace}/{module}"

# owner/name as the Hub accepts them: letters, digits, '-', '_', '.'; no '--' or '..'; at most 96 chars per part
_HUB_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
_HUB_ID = re.compile(rf"^{_HUB_PART}/{_HUB_PART}$")


class SpaceError(gr.Error, ValueError):
    """A user-facing error: a ``ValueError`` for Python callers, shown in Gradio's error modal.

    ``str(error)`` is the plain message; ``error.message`` (what Gradio renders as HTML) is escaped.
    """

    def __init__(self, message: str, title: str = "Error"):
        # < > & escaped (the modal renders HTML); quotes kept, so "model='x'" does not reach visitors as &#x27;
        super().__init__(html.escape(str(message), quote=False), duration=None, title=title, print_exception=False)
        self.plain = message
        self.args = (message,)

    def __str__(self) -> str:
        return self.plain


def escape(text) -> str:
    """``html.escape`` of ``str(text)`` (quotes included): the one way user text enters rendered HTML."""
    return html.escape(str(text), quote=True)


def is_hosted() -> bool:
    """True inside a Hugging Face Space (the platform sets ``SPACE_ID``)."""
    return bool(os.environ.get("SPACE_ID"))


def is_hub_id(value: str) -> bool:
    """``owner/name`` with the Hub's allowed characters (no path tricks such as ``..``, ``/`` or ``~``)."""
    return (isinstance(value, str) and bool(_HUB_ID.fullmatch(value)) and "--" not in value and ".." not in value
            and not value.endswith(".git"))


# --------------------------------------------------------------------------- models
def _offline_message(choice: str) -> str:
    return (f"could not reach the Hub for {choice!r} — this Space may be offline; the demo models always work "
            f"({', '.join(DEMO_MODELS)})")


def _safe(hosted: bool) -> SafeLoad:
    """The library's hosted mode as this Space uses it: the metadata question (at most ``MAX_PARAMETERS``) when hosted."""
    return SafeLoad(max_parameters=MAX_PARAMETERS if hosted else None)


def resolve_model(choice: str, hosted: bool | None = None) -> TextClassifier:
    """The classifier for a model choice of a Space: a demo model, a Hub id, or (not hosted) a local folder.

    Args:
        choice: ``"textxai/demo-sentiment"``, ``"textxai/demo-topic"``, a Hub id ``owner/name`` of a
            sequence classifier with safetensors weights, or, on your own machine only, a local folder.
        hosted: refuse local paths; default: ``is_hosted()`` (env ``SPACE_ID`` set).

    Loads through the library's resolver in hosted mode (``as_classifier(name, safe=SafeLoad(...))``:
    ``trust_remote_code=False``, ``use_safetensors=True``, the Hub metadata first when hosted, one deadline,
    cached). Raises :class:`SpaceError` (a ``ValueError`` shown by Gradio) with a message a visitor can act on.
    """
    if hosted is None:
        hosted = is_hosted()
    if not isinstance(choice, str) or not choice.strip():
        raise SpaceError(f"model={choice!r}: choose a demo model ({', '.join(DEMO_MODELS)}) or enter a Hub id owner/name")
    choice = choice.strip()
    key = choice
    if choice not in DEMO_MODELS:
        local = os.path.exists(os.path.expanduser(choice))
        if hosted and (local or not is_hub_id(choice)):
            raise SpaceError(
                f"model={choice!r}: this hosted Space loads only the demo models ({', '.join(DEMO_MODELS)}) "
                "or a Hub id owner/name; local paths are refused"
            )
        if not hosted and local:
            key = os.path.realpath(os.path.expanduser(choice))
        elif not is_hub_id(choice):
            raise SpaceError(
                f"model={choice!r}: expected a demo model ({', '.join(DEMO_MODELS)}), a Hub id owner/name "
                "or an existing local folder"
            )
    try:
        return as_classifier(key, safe=_safe(hosted))
    except ModelRefused as error:
        raise SpaceError(str(error)) from error
    except TimeoutError as error:
        raise SpaceError(f"model={choice!r}: {error}", title="Hub too slow") from error
    except Exception as error:  # noqa: BLE001 - every load failure becomes a message for the visitor
        raise _load_failure(choice, error) from error


def _load_failure(choice: str, error: Exception) -> SpaceError:
    """The visitor's message for a classifier that could not be loaded."""
    if isinstance(error, SpaceError):
        return error
    if choice in DEMO_MODELS:
        return SpaceError(f"the demo model {choice!r} could not be built ({type(error).__name__}: {error})")
    if is_hub_id(choice) and not os.path.exists(choice):
        if hub_unreachable(error):
            return SpaceError(_offline_message(choice), title="Hub unreachable")
        if hub_not_found(error):
            return SpaceError(f"model={choice!r}: no such model on the Hub (or it is private/gated); check the id")
    hint = " Only safetensors weights are loaded here (use_safetensors=True)." if "safetensors" in str(error).lower() else ""
    return SpaceError(f"{error}{hint}")


def resolve_lm(choice, listed: Sequence[str] = (), hosted: bool | None = None, argument: str = "lm"):
    """A causal LM (perplexity, judge) under the same rules as a classifier; ``None`` for "none" / empty.

    ``listed`` are the Space's own choices (e.g. ``"gpt2"``, ``"distilgpt2"``): they work in hosted mode too.
    Hosted: Hub ids only, metadata checked first (safetensors, at most ``MAX_PARAMETERS``), loaded with
    ``use_safetensors=True`` and no remote code, under the Hub deadline, into the library's bounded LM cache
    (``textxai.lm.as_lm(name, safe=SafeLoad(...))``).
    """
    from textxai import lm as _lm

    if hosted is None:
        hosted = is_hosted()
    if choice is None or not str(choice).strip() or str(choice).strip() == "none":
        return None
    if not isinstance(choice, str):
        raise SpaceError(f"{argument}={choice!r:.60}: expected 'none', {list(listed)} or a Hub id owner/name")
    choice = choice.strip()
    local = os.path.exists(os.path.expanduser(choice))
    if hosted and choice not in listed and (local or not is_hub_id(choice)):
        raise SpaceError(f"{argument}={choice!r}: this hosted Space loads only {list(listed)} or Hub ids owner/name; "
                         "local paths are refused")
    if not local and not is_hub_id(choice) and choice not in listed:
        raise SpaceError(f"{argument}={choice!r}: expected 'none', {list(listed)}, a Hub id of a causal LM or a local folder")
    key = os.path.realpath(os.path.expanduser(choice)) if local and not hosted else choice
    try:
        return _lm.as_lm(key, safe=_safe(hosted))
    except ModelRefused as error:
        raise SpaceError(str(error).replace("lm=", f"{argument}=", 1)) from error
    except TimeoutError as error:
        raise SpaceError(f"{argument}={choice!r}: {str(error).replace('lm=', f'{argument}=', 1)}",
                         title="Hub too slow") from error
    except SpaceError:
        raise
    except Exception as error:  # noqa: BLE001 - every load failure becomes a message for the visitor
        if not local and hub_unreachable(error):
            raise SpaceError(f"{argument}={choice!r}: could not reach the Hub — this Space may be offline",
                             title="Hub unreachable") from error
        if not local and hub_not_found(error):
            raise SpaceError(f"{argument}={choice!r}: no such model on the Hub (or it is private/gated)") from error
        raise SpaceError(str(error).replace("lm=", f"{argument}=", 1)) from error


def clear_cache() -> None:
    """Forget the loaded classifiers (tests, memory)."""
    classifier.clear_cache()


def model_dropdown(value: str = DEFAULT_MODEL, label: str = "Model", choices: Sequence[str] = DEMO_MODELS,
                   info: str | None = None, **kwargs) -> gr.Dropdown:
    """The model choice: the demo models listed, any Hub id ``owner/name`` typed in (custom value)."""
    if info is None:
        info = ("A demo model (always available) or a Hub id owner/name of a text classifier with safetensors "
                "weights")
    return gr.Dropdown(choices=list(choices), value=value, label=label, info=info, allow_custom_value=True,
                       filterable=True, **kwargs)


# --------------------------------------------------------------------------- inputs
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")  # fillers drawn as nothing (Hangul, Braille blank)


def _invisible(char: str) -> bool:
    import unicodedata

    return char.isspace() or char in _BLANK_LETTERS or unicodedata.category(char) in ("Cf", "Cc", "Zs", "Zl", "Zp")


def is_blank(text: str) -> bool:
    """True when ``text`` shows nothing: only white space and invisible characters (zero-width spaces and joiners,
    byte-order marks, soft hyphens, control characters, blank fillers).

    >>> is_blank("\\u200b\\u200d \\ufeff"), is_blank(" a ")
    (True, False)
    """
    return all(_invisible(c) for c in text)


def check_size(text, name: str = "text", max_chars: int | None = None) -> str:
    """``text`` (a string; None is empty) when at most ``max_chars`` characters (default ``MAX_PASTE_CHARS``), checked
    before anything splits or parses it."""
    if text is None:
        return ""
    if not isinstance(text, str):
        raise SpaceError(f"{name}={text!r:.60} ({type(text).__name__}): expected a string")
    limit = MAX_PASTE_CHARS if max_chars is None else max_chars
    if len(text) > limit:
        raise SpaceError(f"{name} has {len(text):,} characters; this Space accepts at most {limit:,} here — "
                         "shorten it or run textxai locally (`textxai run`)")
    return text


def split_lines(text: str | None, name: str = "text", max_chars: int | None = None) -> list[str]:
    """The non-blank lines of a textbox, stripped: one text per line. Lines that show nothing (white space,
    zero-width characters) are blank; the whole box is refused above ``max_chars`` before it is split."""
    text = check_size(text, name, max_chars)
    return [line.strip() for line in text.splitlines() if not is_blank(line)]


def _number(value, name: str, low: float, high: float, integer: bool):
    expected = f"{'an integer' if integer else 'a number'} from {low:g} to {high:g}"
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise SpaceError(f"{name}={value!r:.40}: expected {expected}") from None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise SpaceError(f"{name}={value!r:.40} ({type(value).__name__}): expected {expected}")
    if not math.isfinite(value) or not low <= value <= high:
        raise SpaceError(f"{name}={value!r}: expected {expected}")
    if integer and value != int(value):
        raise SpaceError(f"{name}={value!r}: expected {expected} (a whole number)")
    return int(value) if integer else float(value)


def integer_input(value, name: str, low: int = 1, high: int = 10**6) -> int:
    """A whole number from a slider or an API call, in ``[low, high]``: text that is no number, NaN, inf, 1e30,
    2.7 or a bool is a :class:`SpaceError` naming the input. Positive ones pass the library's check too.

    >>> integer_input(5.0, "beam_size", 1, 20), integer_input("3", "steps", 1, 5)
    (5, 3)
    >>> integer_input(2.7, "beam_size", 1, 20)
    Traceback (most recent call last):
    ...
    textxai.spaces.SpaceError: beam_size=2.7: expected an integer from 1 to 20 (a whole number)
    """
    from textxai.validation import check_positive_int

    value = _number(value, name, low, high, integer=True)
    return check_positive_int(value, name) if low >= 1 else value


def number_input(value, name: str, low: float, high: float) -> float:
    """A finite number in ``[low, high]`` from a slider or an API call, else a :class:`SpaceError` naming it.

    >>> number_input("nan", "max_rate", 0, 1)
    Traceback (most recent call last):
    ...
    textxai.spaces.SpaceError: max_rate=nan: expected a number from 0 to 1
    """
    return _number(value, name, low, high, integer=False)


def slider(minimum: float, maximum: float, *args, name: str = "value", integer: bool = False, **kwargs) -> gr.Slider:
    """``gr.Slider`` whose value, also when sent through the API, is checked by :func:`integer_input` /
    :func:`number_input` (``name`` in the message) before the handler runs. (A wrapped ``preprocess``, not a
    subclass: gradio writes a ``.pyi`` stub beside the module of every Component subclass.)"""
    component = gr.Slider(minimum, maximum, *args, **kwargs)
    check = integer_input if integer else number_input
    component.preprocess = lambda payload: check(payload, name, component.minimum, component.maximum)
    return component


def read_upload(path, name: str = "csv", max_rows: int | None = None, max_bytes: int | None = None) -> list[dict]:
    """The rows of an uploaded csv / tsv / jsonl / json / parquet file, read by :mod:`textxai.tables` (the CLI's
    reader: no cell length limit, duplicated headers refused) after its size is checked (``MAX_UPLOAD_BYTES``)
    and stopping after ``max_rows`` rows; errors name the input and the file (not the server's folder)."""
    from pathlib import Path

    from textxai import tables

    if path is None:
        raise SpaceError(f"{name}: no file uploaded")
    path = Path(getattr(path, "name", path))
    try:
        return tables.read_rows(path, name, MAX_UPLOAD_BYTES if max_bytes is None else max_bytes, max_rows)
    except (ValueError, OSError) as error:
        message = str(error).replace(repr(str(path)), repr(path.name)).replace(str(path.parent) + os.sep, "")
        raise SpaceError(message) from None


def check_inputs(texts, max_texts: int = MAX_TEXTS, max_chars: int = MAX_CHARS, name: str = "texts") -> list[str]:
    """``texts`` as a list of strings within the Space's caps, else a :class:`SpaceError` saying what to do.

    A single string counts as one text. At least one text must be non-blank; at most ``max_texts`` texts of
    at most ``max_chars`` characters each (run textxai locally, ``textxai run``, for more).
    """
    if isinstance(texts, str):
        texts = [texts]
    if texts is None or not isinstance(texts, Sequence):
        raise SpaceError(f"{name}={texts!r:.60}: expected a list of texts")
    texts = list(texts)
    from textxai.validation import check_unicode

    def field(i: int) -> str:  # the visitor's field: "original", not "original[0]" (nor the library's references[0])
        return name if max_texts == 1 else f"{name}[{i}]"

    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise SpaceError(f"{field(i)}={text!r:.60} ({type(text).__name__}): expected a string")
        try:
            check_unicode(text, field(i))
        except ValueError as error:
            raise SpaceError(str(error)) from None
    if not any(not is_blank(text) for text in texts):
        raise SpaceError(f"{name}: no text given; enter at least one text (zero-width and white space characters "
                         "alone are no text)" if any(texts) else f"{name}: no text given; enter at least one text")
    for i, text in enumerate(texts):
        if text.strip() and is_blank(text):
            codes = ", ".join(sorted({f"U+{ord(c):04X}" for c in text if not c.isspace()}))
            raise SpaceError(f"{field(i)} holds only invisible characters ({codes}); expected a visible text")
    if len(texts) > max_texts:
        raise SpaceError(f"{name}: {len(texts)} texts given; this Space accepts at most {max_texts} — "
                         "run textxai locally (`textxai run`) for more")
    for i, text in enumerate(texts):
        if len(text) > max_chars:
            raise SpaceError(f"{field(i)} has {len(text):,} characters; this Space accepts at most {max_chars:,} "
                             "per text — shorten it or run textxai locally")
    return texts


# ------------------------------------------------------------------ the module's JSON beside the rendering
import contextvars  # noqa: E402

_RESULT: contextvars.ContextVar = contextvars.ContextVar("textxai_space_result", default=None)


def record_result(result) -> None:
    """Keep ``result`` (the module's JSON result: ``Analysis.summary``, what ``compute`` returns) as the answer of
    the request running (:func:`with_result`); outside one, nothing happens."""
    box = _RESULT.get()
    if box is not None:
        from textxai.outputs import to_jsonable

        box.append(to_jsonable(result))


def with_result(fn: Callable) -> Callable:
    """``fn``'s outputs followed by the module's JSON result it recorded (:func:`record_result`; None if none):
    every endpoint answers ``gradio_client`` users with the numbers, not only HTML and plots."""

    @wraps(fn)
    def wrapper(*args, **kwargs):
        box = []
        token = _RESULT.set(box)
        try:
            out = fn(*args, **kwargs)
        finally:
            _RESULT.reset(token)
        return (*(out if isinstance(out, tuple) else (out,)), box[-1] if box else None)

    return wrapper


def result_json(elem_id: str = "textxai-result-json"):
    """The endpoint's JSON output: the module's result as ``evaluate``'s ``compute`` returns it."""
    return gr.JSON(label="Result (JSON, as the evaluate module returns it)", elem_id=elem_id)


def user_errors(fn: Callable, max_seconds: float | None = None) -> Callable:
    """Wrap a Gradio handler: it runs under the wall-time budget (``MAX_SECONDS``) and user mistakes, load
    time-outs, budget overruns and errors of user callables reach the visitor as an (escaped) error modal."""
    from textxai.batching import WorkBudgetExceeded, work_budget
    from textxai.validation import CallbackError

    @wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            with work_budget(seconds=MAX_SECONDS if max_seconds is None else max_seconds, what="this request"):
                return fn(*args, **kwargs)
        except SpaceError:
            raise
        except WorkBudgetExceeded as error:
            raise SpaceError(str(error), title="Too much work") from error
        except TimeoutError as error:
            raise SpaceError(str(error), title="Hub too slow") from error
        except (ValueError, TypeError, CallbackError) as error:
            raise SpaceError(str(error)) from error

    return wrapper


# --------------------------------------------------------------------------- work estimates
def check_budget(evaluations: int, what: str, hint: str = "", max_evaluations: int | None = None) -> int:
    """Refuse (before any model call) a request that implies more than ``MAX_EVALUATIONS`` model evaluations.

    >>> check_budget(10, "texts")
    10
    >>> check_budget(10**6, "texts", "use fewer texts")
    Traceback (most recent call last):
    ...
    textxai.spaces.SpaceError: texts: this request needs about 1,000,000 model evaluations (~4.0 h here); this Space runs at most 4,200 (~60 s) per request — use fewer texts, or run textxai locally (`textxai run`)
    """
    limit = MAX_EVALUATIONS if max_evaluations is None else max_evaluations
    if evaluations > limit:
        advice = f"{hint}, or run textxai locally (`textxai run`)" if hint else "run textxai locally (`textxai run`)"
        raise SpaceError(f"{what}: this request needs about {evaluations:,} model evaluations "
                         f"(~{_duration(evaluations / EVALUATIONS_PER_SECOND)} here); this Space runs at most "
                         f"{limit:,} (~{_duration(limit / EVALUATIONS_PER_SECOND)}) per request — {advice}",
                         title="Too much work")
    return int(evaluations)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


# the word count the estimates read (each method's cost formula is in its textxai.<package>.method, shared with
# the CLI's estimate): no second table here
from textxai.estimates import approx_words, attribution_evaluations  # noqa: E402,F401


# --------------------------------------------------------------------------- result files
def output_dir() -> Path:
    """Where Spaces write downloadable results: ``textxai-space-outputs`` in the system's temporary folder
    (created), one of the places gradio serves a returned file from without ``allowed_paths`` (a folder under
    ``$HF_HOME``, as before, made every download fail with gradio's InvalidPathError unless HF_HOME was in /tmp).

    >>> import tempfile; output_dir().parent == Path(tempfile.gettempdir())
    True
    """
    import tempfile

    folder = Path(tempfile.gettempdir()) / "textxai-space-outputs"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


_FORMULA_STARTS = ("=", "+", "-", "@", "\uff1d", "\uff0b", "\uff0d", "\uff20")  # and their full-width forms
_LEADING = " \t\r\n\v\f\u00a0\u3000\u200b\u200c\u200d\u2060\ufeff"  # spreadsheets skip these before a formula


def csv_cell(value):
    """A CSV cell that a spreadsheet will not run as a formula: text starting with = + - @ (also full-width
    ＝ ＋ － ＠, also after leading white space, newlines or zero-width characters) or with a tab / CR gets a
    leading apostrophe; numbers stay numbers.

    >>> [csv_cell(v) for v in ["=cmd|' /C calc'!A0", "-1", "@SUM(A1)", "fine", -0.5, " \\n=1+1", "＝1+1"]]
    ["'=cmd|' /C calc'!A0", "'-1", "'@SUM(A1)", 'fine', -0.5, "' \\n=1+1", "'＝1+1"]
    """
    if isinstance(value, str) and (value[:1] in ("\t", "\r") or value.lstrip(_LEADING)[:1] in _FORMULA_STARTS):
        return "'" + value
    return value


def prune_outputs(keep: int | None = None) -> None:
    """Remove the oldest result files of :func:`output_dir` (CSV downloads, audit reports) beyond ``keep``
    (default ``MAX_OUTPUT_FILES - 1``: room for the one about to be written)."""
    keep = MAX_OUTPUT_FILES - 1 if keep is None else keep
    folder = output_dir()
    old = sorted((p for p in folder.iterdir() if p.is_file()), key=lambda p: p.stat().st_mtime)
    for path in old[: max(0, len(old) - keep)]:
        path.unlink(missing_ok=True)


def write_output(text: str, stem: str, suffix: str) -> str:
    """Write ``text`` as a new result file of :func:`output_dir` (the oldest pruned: at most ``MAX_OUTPUT_FILES``
    kept) and return its path."""
    import tempfile

    prune_outputs()
    handle = tempfile.NamedTemporaryFile("w", prefix=f"{stem}-", suffix=suffix, dir=output_dir(), delete=False,
                                         encoding="utf-8")
    with handle:
        handle.write(text)
    return handle.name


def write_csv(rows: Sequence[Sequence], header: Sequence[str], stem: str) -> str:
    """Write an escaped CSV into :func:`output_dir` (keeping at most ``MAX_OUTPUT_FILES`` files) and return its path."""
    import csv
    import tempfile

    folder = output_dir()
    prune_outputs()
    handle = tempfile.NamedTemporaryFile("w", suffix=f"_{stem}.csv", dir=folder, delete=False, encoding="utf-8", newline="")
    with handle:
        writer = csv.writer(handle)
        writer.writerow([csv_cell(h) for h in header])
        for row in rows:
            writer.writerow([csv_cell(v) for v in row])
    return handle.name


# --------------------------------------------------------------------------- rendering
# the word heat map is the library's (textxai.render: the audit report draws it without gradio), shown here too
from textxai.render import _color, highlight_words  # noqa: E402,F401


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


def header_markdown(title: str, module: str, paper_url: str, paper_title: str | None = None, description: str = "",
                    namespace: str | None = None) -> str:
    """The standard header: title, one-line description, paper link, module link and how to load it.
    ``namespace``: the Hub owner of the module (default: ``$TEXTXAI_NAMESPACE``, set by ``textxai publish``)."""
    namespace = namespace or os.environ.get("TEXTXAI_NAMESPACE", "textxai")
    paper = paper_title or paper_url
    module_url = MODULE_URL.format(namespace=namespace, module=module)
    lines = [f"# {title}"]
    if description:
        lines.append(description)
    lines.append(f"Paper: [{paper}]({paper_url}) · Module: [{namespace}/{module}]({module_url}) · "
                 f"`evaluate.load(\"{namespace}/{module}\")` or `textxai.load(\"{module}\")`")
    return "\n\n".join(lines)


def footer_markdown(max_texts: int = MAX_TEXTS, max_chars: int = MAX_CHARS) -> str:
    return (f"Models: the demo models always work; a Hub id must name a text classifier with safetensors weights "
            f"(no remote code). Limits here: {max_texts} texts of {max_chars:,} characters. "
            "For more, install textxai from a clone of its repository (`pip install -e .`; it is on no package "
            "index yet) and run `textxai run` locally.")


def header(title: str, module: str, paper_url: str, paper_title: str | None = None, description: str = "",
           namespace: str = "textxai") -> gr.Markdown:
    """``gr.Markdown`` of :func:`header_markdown` (call inside a ``gr.Blocks``)."""
    return gr.Markdown(header_markdown(title, module, paper_url, paper_title, description, namespace))


def footer(max_texts: int = MAX_TEXTS, max_chars: int = MAX_CHARS) -> gr.Markdown:
    return gr.Markdown(footer_markdown(max_texts, max_chars), elem_classes=["textxai-footer"])


def queue(demo: gr.Blocks, concurrency_limit: int = CONCURRENCY_LIMIT, max_size: int = QUEUE_MAX_SIZE) -> gr.Blocks:
    """The request queue of every Space: ``concurrency_limit`` jobs at once, ``max_size`` waiting at most."""
    return demo.queue(default_concurrency_limit=concurrency_limit, max_size=max_size)


@contextmanager
def space(title: str, module: str, paper_url: str, paper_title: str | None = None, description: str = "",
          namespace: str = "textxai", max_texts: int = MAX_TEXTS, max_chars: int = MAX_CHARS,
          concurrency_limit: int = CONCURRENCY_LIMIT, max_size: int = QUEUE_MAX_SIZE) -> Iterator[gr.Blocks]:
    """A ``gr.Blocks`` with the standard header and footer and the standard queue.

    >>> with space("Demo", module="naopc", paper_url="https://example.org") as demo:
    ...     box = gr.Textbox()
    >>> demo.title, demo._queue.max_size
    ('Demo', 16)
    """
    with gr.Blocks(title=title) as demo:
        header(title, module, paper_url, paper_title, description, namespace)
        yield demo
        footer(max_texts, max_chars)
    queue(demo, concurrency_limit, max_size)
    _cap_uploads(demo)


def _cap_uploads(demo: gr.Blocks) -> None:
    """``demo.launch()`` refuses uploads above ``MAX_UPLOAD_BYTES`` in the server (HTTP 413), unless told otherwise."""
    launch = demo.launch

    @wraps(launch)
    def capped(*args, **kwargs):
        kwargs.setdefault("max_file_size", MAX_UPLOAD_BYTES)
        return launch(*args, **kwargs)

    demo.launch = capped


# ---------------------------------------------------------------------------------------------- intervals

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
