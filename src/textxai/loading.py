"""Loading models safely: no silently untrained weights, a deadline on Hub access, bounded caches.

- :func:`from_pretrained_checked` loads with transformers' own loading report
  (``output_loading_info=True``) and refuses a model with newly initialised weights (e.g. a
  classification head the checkpoint does not have: its results would be random and differ per process).
- :func:`with_deadline` runs a load that may touch the Hub in a worker thread and gives up after
  ``hub_timeout()`` seconds (env ``TEXTXAI_HUB_TIMEOUT``, default 25): a Hub endpoint that accepts the
  connection and never answers cannot hold a caller (or a Space worker) for minutes.
- :class:`LRUCache` is the one bounded, thread-safe cache of loaded objects (classifiers, language
  models, embedders, keyword indexes) shared by the library and the Spaces; an entry loaded from a folder
  carries the folder's :func:`folder_fingerprint` and is loaded again once the files change.
- :class:`SafeLoad` is the hosted mode of the library's resolvers (``as_classifier(name, safe=...)``,
  ``as_lm(name, safe=...)``): how an app that loads the models its visitors name (a Space) loads them.

>>> cache = LRUCache(maxsize=2)
>>> [cache.get_or_create(k, lambda k=k: k * 2) for k in (1, 2, 1, 3)]
[2, 4, 2, 6]
>>> sorted(cache.keys())          # 2 was the least recently used
[1, 3]
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass

DEFAULT_HUB_TIMEOUT = 25.0


def hub_timeout() -> float:
    """Seconds a load that may reach the Hub may take (env ``TEXTXAI_HUB_TIMEOUT``, default 25; 0 = no limit)."""
    raw = os.environ.get("TEXTXAI_HUB_TIMEOUT")
    if raw is None or not raw.strip():
        return DEFAULT_HUB_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"TEXTXAI_HUB_TIMEOUT={raw!r}: expected a number of seconds (0 = no limit)") from None
    if value < 0:
        raise ValueError(f"TEXTXAI_HUB_TIMEOUT={raw!r}: expected a number of seconds >= 0 (0 = no limit)")
    return value


def first_line(error: BaseException) -> str:
    """``Type: first line of the message`` of an exception."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"


def with_deadline(fn: Callable, what: str, timeout: float | None = None):
    """``fn()``, or a ``TimeoutError`` naming ``what`` after ``timeout`` seconds (default :func:`hub_timeout`).

    The call runs in a daemon thread; on timeout it is abandoned (it ends when its own network timeouts
    fire) and the caller is freed. Exceptions of ``fn`` are re-raised as they are.

    >>> with_deadline(lambda: 42, "answer")
    42
    """
    timeout = hub_timeout() if timeout is None else timeout
    if not timeout:
        return fn()
    box: dict = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as error:  # noqa: BLE001 - handed to the caller
            box["error"] = error

    worker = threading.Thread(target=target, name=f"textxai-load {what}", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise TimeoutError(
            f"{what}: loading did not finish within {timeout:g} s (the Hub or the network does not answer); "
            "check the id and your connection, use a local folder, or raise TEXTXAI_HUB_TIMEOUT"
        )
    if "error" in box:
        raise box["error"]
    return box["value"]


def is_local_source(source) -> bool:
    """A local folder (no Hub access needed)."""
    return isinstance(source, (str, os.PathLike)) and os.path.isdir(os.path.expanduser(str(source)))


def folder_fingerprint(source) -> tuple | None:
    """``(name, size, mtime_ns, ctime_ns, inode)`` of every file at the top of a local folder (weights, config, tokenizer files,
    sorted by name), ``None`` for anything else (a Hub id, a demo name): what a cache keyed by path compares to
    notice that a checkpoint was saved again in the same folder (a copy that keeps the old modification time,
    ``cp -p``, still changes the inode and the change time). A few ``stat`` calls, no reading.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp()); _ = (folder / "config.json").write_text("{}")
    >>> before = folder_fingerprint(folder); _ = (folder / "config.json").write_text('{"a": 1}')
    >>> before != folder_fingerprint(folder), folder_fingerprint("someone/model")
    (True, None)
    """
    if not is_local_source(source):
        return None
    folder = os.path.expanduser(str(source))
    stamp = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_file():
                    info = entry.stat()
                    stamp.append((entry.name, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino))
    except OSError:
        return None
    return tuple(sorted(stamp))


def new_weights(info: dict) -> list[str]:
    """Names of the weights transformers initialised anew (missing from, or mismatched in, the checkpoint)."""
    names = list(info.get("missing_keys") or [])
    for item in info.get("mismatched_keys") or []:
        names.append(item[0] if isinstance(item, (tuple, list)) else str(item))
    return sorted(set(map(str, names)))


def from_pretrained_checked(auto_class, source, name: str, argument: str = "model", allow_new_weights: bool = False,
                            **kwargs):
    """``auto_class.from_pretrained(source, **kwargs)`` that refuses newly initialised weights.

    ``name`` (what the user passed) and ``argument`` (``"model"``, ``"lm"``, ...) go into the message.
    ``allow_new_weights=True`` is an explicit opt-in for code that trains the new weights itself.
    """
    model, info = auto_class.from_pretrained(source, output_loading_info=True, **kwargs)
    fresh = new_weights(info)
    if fresh and not allow_new_weights:
        shown = ", ".join(fresh[:6]) + (f", ... ({len(fresh)} in all)" if len(fresh) > 6 else "")
        raise ValueError(
            f"{argument}={name!r}: its checkpoint lacks weights that would be initialised at random ({shown}); "
            f"results would be meaningless and differ per process. Expected a fine-tuned "
            f"{auto_class.__name__.removeprefix('AutoModelFor') or 'model'} checkpoint with these weights"
        )
    return model


# ---------------------------------------------------------------------------------------------- hosted mode
#: What every :class:`SafeLoad` load passes to ``from_pretrained``: no pickled weights, no code from the model repo.
SAFE_LOAD_KWARGS = {"trust_remote_code": False, "use_safetensors": True}


class ModelRefused(ValueError):
    """A model a :class:`SafeLoad` refuses before downloading it; the message says why and what to do."""


@dataclass(frozen=True)
class SafeLoad:
    """The hosted mode of :func:`textxai.classifier.as_classifier` and :func:`textxai.lm.as_lm` (``safe=``): how
    an app that loads the models its visitors name (a Space) loads them.

    Always: :data:`SAFE_LOAD_KWARGS` (safetensors only, no remote code), a load that may reach the Hub (the
    metadata question and the download) within ONE :func:`with_deadline`, loaded models cached apart from plain
    loads (the same name loaded unsafely elsewhere is not handed out). ``max_parameters`` (hosted; ``None``: no
    question): before downloading a Hub id, its metadata is read and a model without safetensors weights, with
    more parameters, or missing is refused (:class:`ModelRefused`, naming ``who``); a Hub that cannot be asked
    leaves the answer to the load itself.

    >>> SafeLoad(max_parameters=10**8)
    SafeLoad(max_parameters=100000000, who='this Space')
    """

    max_parameters: int | None = None
    who: str = "this Space"


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__


def hub_unreachable(error: BaseException) -> bool:
    """Whether a load failure means the Hub could not be reached (offline mode, DNS, timeout, refused)."""
    from huggingface_hub.errors import LocalEntryNotFoundError, OfflineModeIsEnabled

    for e in _chain(error):
        if isinstance(e, (LocalEntryNotFoundError, OfflineModeIsEnabled, ConnectionError, TimeoutError)):
            return True
        name = type(e).__name__
        if name in ("ConnectError", "ConnectTimeout", "ReadTimeout", "gaierror", "NetworkError"):
            return True
        text = str(e).lower()
        if "couldn't connect" in text or "offline mode" in text or "outgoing traffic has been disabled" in text:
            return True
    return False


def hub_not_found(error: BaseException) -> bool:
    """Whether a load failure means the Hub has no such (public) repository."""
    from huggingface_hub.errors import RepositoryNotFoundError

    return any(isinstance(e, RepositoryNotFoundError) for e in _chain(error))


def check_hub_model(name: str, safe: SafeLoad, argument: str = "model") -> None:
    """Before ``safe`` downloads the Hub id ``name``: safetensors weights and at most ``safe.max_parameters``.

    Uses the Hub's metadata (no download). When the Hub cannot be asked (offline), the check is left to the load,
    which then fails with its own message or succeeds from the local cache.
    """
    from huggingface_hub import HfApi

    try:
        info = HfApi().model_info(name, expand=["safetensors"], timeout=min(10.0, hub_timeout() or 10.0))
    except Exception as error:  # noqa: BLE001
        if hub_unreachable(error):
            return
        if hub_not_found(error):
            raise ModelRefused(f"{argument}={name!r}: no such model on the Hub (or it is private/gated); check the id") \
                from error
        return  # other metadata problems: let the load report them
    safetensors = getattr(info, "safetensors", None)
    if safetensors is None:
        raise ModelRefused(f"{argument}={name!r} has no safetensors weights on the Hub; {safe.who} loads only "
                           "safetensors (use_safetensors=True)")
    total = int(getattr(safetensors, "total", 0) or 0)
    if safe.max_parameters is not None and total > safe.max_parameters:
        raise ModelRefused(f"{argument}={name!r} has {total:,} parameters; {safe.who} loads models of at most "
                           f"{safe.max_parameters:,} — run textxai locally for bigger ones")


def load_safely(name: str, build: Callable[[dict], object], safe: SafeLoad, argument: str = "model",
                hub: bool = True):
    """``build(SAFE_LOAD_KWARGS)`` under ``safe``'s rules; ``hub``: ``name`` may reach the Hub (then the metadata
    question when ``safe.max_parameters`` is set, and everything within one deadline)."""
    if not hub:
        return build(dict(SAFE_LOAD_KWARGS))

    def load():
        if safe.max_parameters is not None:
            check_hub_model(name, safe, argument)
        return build(dict(SAFE_LOAD_KWARGS))

    return with_deadline(load, f"{argument}={name!r}")


class LRUCache:
    """A thread-safe mapping of at most ``maxsize`` entries; the least recently used entry is dropped first.

    :meth:`get_or_create` builds a missing entry under a per-key lock, so one object is loaded once per
    process even when requests arrive together, while other keys stay available meanwhile.
    """

    def __init__(self, maxsize: int):
        if isinstance(maxsize, bool) or not isinstance(maxsize, int) or maxsize <= 0:
            raise ValueError(f"maxsize={maxsize!r}: expected a positive integer")
        self.maxsize = maxsize
        self._data: OrderedDict = OrderedDict()
        self._stamps: dict = {}  # key -> the stamp its value was built under (see get_or_create)
        self._lock = threading.Lock()
        self._key_locks: dict = {}

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._data

    def keys(self) -> list:
        with self._lock:
            return list(self._data)

    def get(self, key: Hashable, default=None):
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
        return default

    def put(self, key: Hashable, value, stamp=None) -> None:
        with self._lock:
            self._data[key] = value
            self._stamps[key] = stamp
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                dropped, _ = self._data.popitem(last=False)
                self._stamps.pop(dropped, None)

    def _current(self, key: Hashable, stamp, missing):
        with self._lock:
            if key in self._data and self._stamps.get(key) == stamp:
                self._data.move_to_end(key)
                return self._data[key]
        return missing

    def get_or_create(self, key: Hashable, factory: Callable, stamp=None):
        """The cached value of ``key``, else ``factory()`` stored under it (a failure is not cached).

        ``stamp`` (e.g. :func:`folder_fingerprint` of the files the value is loaded from, taken before loading):
        a value built under another stamp is stale and built again.
        """
        missing = object()
        value = self._current(key, stamp, missing)
        if value is not missing:
            return value
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            value = self._current(key, stamp, missing)
            if value is missing:
                self.pop(key)
                value = factory()
                self.put(key, value, stamp)
        with self._lock:
            self._key_locks.pop(key, None)
        return value

    def pop(self, key: Hashable, default=None):
        with self._lock:
            self._stamps.pop(key, None)
            return self._data.pop(key, default)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._stamps.clear()


def cache_dir() -> "Path":
    """textxai's folder for files it caches: ``$TEXTXAI_CACHE``, else ``$HF_HOME/textxai`` (huggingface_hub's home)."""
    from pathlib import Path

    if os.environ.get("TEXTXAI_CACHE"):
        return Path(os.environ["TEXTXAI_CACHE"])
    from huggingface_hub import constants

    return Path(os.environ.get("HF_HOME") or constants.HF_HOME) / "textxai"


def writable_cache_dir(root=None, variable: str | None = None) -> "Path":
    """:func:`cache_dir` (or ``root``) created and checked writable, else a ``ValueError`` naming the environment
    variable it comes from (``TEXTXAI_CACHE`` or ``HF_HOME``), its value and what is expected -- a read-only or
    mistyped home is the user's setting to change, not a crash inside a later write."""
    from pathlib import Path

    root = cache_dir() if root is None else Path(root)
    variable = variable or ("TEXTXAI_CACHE" if os.environ.get("TEXTXAI_CACHE") else "HF_HOME")
    value = os.environ.get(variable)
    try:
        root.mkdir(parents=True, exist_ok=True)
        if not os.access(root, os.W_OK | os.X_OK):
            raise PermissionError(f"no write permission on {root}")
    except OSError as error:
        raise ValueError(f"{variable}={value!r}: textxai's cache folder {str(root)!r} cannot be created or written "
                         f"({type(error).__name__}: {error}); expected a writable folder (set {variable} to one)") from error
    return root


def cache_size(env: str, default: int) -> int:
    """A cache bound from the environment variable ``env`` (a positive integer), else ``default``."""
    raw = os.environ.get(env)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"{env}={raw!r}: expected a positive integer")
    return value
