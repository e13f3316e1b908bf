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

import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import wraps
from pathlib import Path

from textxai.extras import require

gr = require("gradio", "spaces", "textxai's Gradio Spaces")

from textxai import classifier
from textxai.classifier import DEMO_MODELS, TextClassifier, as_classifier
from textxai.loading import ModelRefused, SafeLoad, hub_not_found, hub_unreachable
# the input checks and the renderers live in textxai.space_inputs / textxai.space_render, importable from here
from textxai.space_inputs import (_BLANK_LETTERS, MAX_CHARS, MAX_PASTE_CHARS, MAX_TEXTS, MAX_UPLOAD_BYTES,  # noqa: F401
                                  SpaceError, _invisible, _number, check_inputs, check_size, escape, integer_input,
                                  is_blank, number_input, read_upload, slider, split_lines)
from textxai.space_render import SPACE_MIN_UNITS, _DEL, _INS, diff_html, space_intervals_html, warnings_html  # noqa: F401

DEFAULT_MODEL = DEMO_MODELS[0]
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

PAPER_DEFAULT_URL = "https://github.com/textxai"
MODULE_URL = "https://huggingface.co/spaces/{namespace}/{module}"

# owner/name as the Hub accepts them: letters, digits, '-', '_', '.'; no '--' or '..'; at most 96 chars per part
_HUB_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
_HUB_ID = re.compile(rf"^{_HUB_PART}/{_HUB_PART}$")


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
