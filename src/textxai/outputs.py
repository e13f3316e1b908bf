"""Result files written atomically: a run writes into a hidden staging folder beside its outputs and, only
when every file is written, replaces the outputs of the same stems together (old ones out, new ones in,
rolled back on any failure; Ctrl-C is held off during those few renames). An interrupted run, a full disk
or a crash while writing leaves the previous results as they were — never a new JSON beside old or empty PNGs.

The outputs of a stem are ``<stem>.json`` and ``<stem>_<figure>.png`` (and ``<stem>.json`` only, for a plain
file such as ``index.json``).

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> with staged(folder, ["naopc"]) as stage:
...     _ = stage.write("naopc", {"aopc": 0.5}, {})
>>> sorted(p.name for p in folder.iterdir())
['naopc.json']
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

import numpy as np

_move = os.replace  # one rename; tests inject failures here


def stem_files(folder: Path, stem: str) -> list[Path]:
    """The existing outputs of ``stem`` in ``folder``: ``<stem>.json`` and ``<stem>_*.png``."""
    found = [folder / f"{stem}.json"] + sorted(folder.glob(f"{stem}_*.png"))
    return [p for p in found if p.is_file()]


class Stage:
    """The staging folder of one run: :meth:`write` puts results there; :func:`staged` commits them."""

    def __init__(self, folder: Path, stems):
        self.folder, self.stems = Path(folder), list(stems)
        self.path = Path(tempfile.mkdtemp(prefix=".textxai-partial-", dir=self.folder))
        self.names: list[str] = []

    def _written(self, name: str, write) -> None:
        try:
            write(self.path / name)
        except OSError as error:
            raise OSError(error.errno, f"--output {str(self.folder)!r}: could not write {name} ({error.strerror or error}); "
                                       "the previous results there are unchanged") from error
        self.names.append(name)

    def write(self, stem: str, results: dict, figures: dict | None = None) -> list[Path]:
        """``<stem>.json`` of ``results`` (JSON-ready: :func:`to_jsonable`) and one PNG per figure (closed
        once written); the paths they will have."""
        if stem not in self.stems:
            raise ValueError(f"stem={stem!r}: not one of the stems staged ({self.stems})")
        figures = dict(figures or {})
        try:
            text = json.dumps(results, indent=2, allow_nan=False)
            self._written(f"{stem}.json", lambda p: p.write_text(text, encoding="utf-8"))
            for name, figure in figures.items():
                self._written(f"{stem}_{name}.png", lambda p, f=figure: f.savefig(p, dpi=110, bbox_inches="tight"))
        finally:
            if figures:
                import matplotlib.pyplot as plt

                for figure in figures.values():
                    plt.close(figure)
        return [self.folder / f"{stem}.json"] + [self.folder / f"{stem}_{name}.png" for name in figures]

    def write_text(self, name: str, text: str) -> Path:
        """A plain file ``name`` (``index.html``, ``audit.json``) whose stem is staged; the path it will have."""
        if Path(name).stem not in self.stems or Path(name).name != name:
            raise ValueError(f"name={name!r}: expected a file name whose stem is one of the stems staged ({self.stems})")
        self._written(name, lambda p: p.write_text(text, encoding="utf-8"))
        return self.folder / name

    def commit(self) -> None:
        """Replace the old outputs of the stems by the staged ones, all or none."""
        with _folder_lock(self.folder), _sigint_held():
            old = [p for stem in self.stems for p in stem_files(self.folder, stem)]
            old += [self.folder / n for n in self.names if (self.folder / n).is_file() and self.folder / n not in old]
            trash = Path(tempfile.mkdtemp(prefix=".textxai-old-", dir=self.folder))
            moved_old, moved_new = [], []
            try:
                for path in old:
                    _move(path, trash / path.name)
                    moved_old.append(path)
                for name in self.names:
                    _move(self.path / name, self.folder / name)
                    moved_new.append(name)
            except BaseException as error:
                try:
                    for name in reversed(moved_new):
                        _move(self.folder / name, self.path / name)
                    for path in reversed(moved_old):
                        _move(trash / path.name, path)
                except OSError as again:  # the old results stay in the trash folder, said so
                    raise OSError(again.errno, f"--output {str(self.folder)!r}: could not replace the results "
                                               f"({error}) nor put the old ones back ({again.strerror}); they are in "
                                               f"{str(trash)!r}") from error
                shutil.rmtree(trash, ignore_errors=True)
                raise
            shutil.rmtree(trash, ignore_errors=True)

    def discard(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


@contextmanager
def staged(folder, stems):
    """``with staged(folder, stems) as stage: stage.write(...)`` — committed together when the block ends
    without an error, discarded (old outputs untouched) when it raises or is interrupted."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stage = Stage(folder, stems)
    try:
        yield stage
        stage.commit()
    finally:
        stage.discard()


@contextmanager
def _folder_lock(folder: Path):
    """An exclusive lock on the folder (POSIX ``flock``): two runs into one --output commit one after the other."""
    try:
        import fcntl
    except ImportError:  # Windows: no lock
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@contextmanager
def _sigint_held():
    """Ctrl-C during the renames is delivered after them (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_DFL if previous is None else previous)
    if received:
        raise KeyboardInterrupt


def to_jsonable(value):
    """Plain JSON values (for results files) from numpy scalars/arrays, tuples and nested containers (NaN -> None).

    >>> to_jsonable({"a": np.float32(0.5), "b": (1, float("nan")), 3: np.arange(2)})
    {'a': 0.5, 'b': [1, None], '3': [0, 1]}
    """
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)
