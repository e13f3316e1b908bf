"""Data-parallel runs on 🤗 accelerate: split the examples across processes, gather the results in order.

Launch any script (or the CLI) with accelerate and every process loads its own model; the per-example
work is split, and every process receives all results, in input order, so the rest of the script (means,
plots) runs the same everywhere and the main process alone writes:

    accelerate launch --multi_gpu --num_processes 4 -m textxai run naopc --model my-model --data texts.csv --output out
    torchrun --nproc_per_node 4 -m textxai run naopc ...             # the same with PyTorch's launcher

On a machine without GPUs the same command starts K CPU processes that talk over gloo. (accelerate's
``--cpu`` flag starts a single process unless MPI is set up with ``--mpirun_hostfile``.) Multi-node runs are
accelerate's own configuration (``accelerate config``, or ``--num_machines``, ``--machine_rank``,
``--main_process_ip``, ``--main_process_port`` on every machine); nothing changes here. Without a launcher
(or with one process) every helper simply runs the function on all examples.

From Python, e.g. NAOPC of a large evaluation set inside a training script (each process holds the model)::

    from textxai import naopc, parallel

    def per_text(indices):                      # the examples of this process -> one result per example
        out = naopc.compute([texts[i] for i in indices], (model, tokenizer), attribution_method="gradient")
        return out["per_example"]

    rows = parallel.map_examples(per_text, len(texts))    # all rows, in order, on every process
    if parallel.is_main_process():
        print(sum(r["naopc_comprehensiveness"] for r in rows) / len(rows))

Every ``textxai run`` module splits: ``naopc`` (texts and their attributions), ``fim_difficulty`` (difficulty,
minimum flip strength, the ``--shift-against`` difficulties; ``--random-flips`` seeds each text by its position,
so it runs whole on every process), ``toki_trust`` (the explanations of the training texts that build the
keyword index, then those of the assessed texts), ``ceval`` (the editor's counterfactuals, the classifier's
probabilities, the LM perplexities) and ``inconsistency`` (the editor's chains, one per original; the labels and
perplexities of given chains). What is not split runs whole on every process, which says so on stderr (ceval's
LLM judge, TOKI's attack). Each process reports its work on stderr (:func:`work_note`).

Library functions that any caller may use split only inside :func:`collective` (``split``): there every
process makes the same calls in the same order, as ``textxai run`` does; outside it (or without a launcher)
they run whole, so a function called on one process alone never waits for the others.

>>> map_examples(lambda indices: [i * i for i in indices], 4)      # one process: just the function
[0, 1, 4, 9]
"""
from __future__ import annotations

import atexit
import contextvars
import functools
import inspect
import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import contextmanager

import numpy as np


def _state():
    """accelerate's ``PartialState`` when this process was started by a multi-process launcher, else None."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return None
    import torch

    from textxai.extras import require

    PartialState = require("accelerate", "parallel", "a multi-process run (textxai.parallel)").PartialState
    if not _STARTED:
        _STARTED.append(True)
        atexit.register(_close)
    # without a GPU, gloo on the CPU (accelerate picks it only when asked for the CPU)
    return PartialState(cpu=not torch.cuda.is_available())


_STARTED: list = []


def _close() -> None:
    """At exit: leave the process group cleanly (an open gloo group aborts the interpreter's shutdown)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def num_processes() -> int:
    state = _state()
    return 1 if state is None else state.num_processes


def is_main_process() -> bool:
    """True on the process that writes outputs (always True without a launcher)."""
    state = _state()
    return True if state is None else state.is_main_process


def device():
    """This process's device under accelerate (its GPU, or the CPU with ``--cpu``), else None (the default)."""
    state = _state()
    return None if state is None else state.device


def takes_part(data_parallel: bool) -> bool:
    """Whether this process runs ``textxai run`` of a method: always, except under a multi-process launch where
    a method whose descriptor has not ``data_parallel=True`` runs on the main process only."""
    return _state() is None or bool(data_parallel) or is_main_process()


def share_note(n: int) -> str:
    """``process r of K: examples a-b of n`` (this process's share), for logs."""
    indices = _shard_indices(n)
    share = f"examples {indices[0]}-{indices[-1]} of {n}" if indices else f"no examples (of {n})"
    return f"process {0 if _state() is None else _state().process_index} of {num_processes()}: {share}"


def _launcher_command() -> list[str]:
    """The command line of the process that started this one (Linux ``/proc``; empty elsewhere)."""
    try:
        with open(f"/proc/{os.getppid()}/cmdline", "rb") as handle:
            return [part.decode("utf-8", "replace") for part in handle.read().split(b"\0") if part]
    except OSError:
        return []


def launch_mismatch() -> str | None:
    """Why this process runs alone although ``accelerate launch --cpu --num_processes K`` (K > 1) asked for K:
    accelerate's simple launcher, which ``--cpu`` picks, starts one process and tells it nothing of K. None
    when no such launch is seen (or the launch did start K processes)."""
    if int(os.environ.get("WORLD_SIZE", "1")) > 1 or not os.environ.get("ACCELERATE_USE_CPU"):
        return None
    command = _launcher_command()
    asked = None
    for i, part in enumerate(command):
        value = part.split("=", 1)[1] if part.startswith(("--num_processes=", "--num-processes=")) else (
            command[i + 1] if part in ("--num_processes", "--num-processes") and i + 1 < len(command) else None)
        if value is not None and value.isdigit():
            asked = int(value)
    if asked is None or asked <= 1:
        return None
    rest = " ".join(command[command.index("-m"):]) if "-m" in command else "-m textxai ..."
    return (f"accelerate launch --cpu --num_processes {asked} started ONE process: accelerate's --cpu launcher runs a "
            f"single process (without MPI); for {asked} CPU processes use: torchrun --nproc_per_node {asked} {rest}")


def process_index() -> int:
    state = _state()
    return 0 if state is None else state.process_index


def note(message: str) -> None:
    """``process r of K: message`` on stderr (a multi-process run only)."""
    if num_processes() > 1:
        # one write with its newline (print writes them apart: two processes' notes once ran together on one line)
        sys.stderr.write(f"process {process_index()} of {num_processes()}: {message}\n")
        sys.stderr.flush()


_COLLECTIVE = contextvars.ContextVar("textxai_collective", default=False)
_WORK: Counter = Counter()  # examples this process handled per split function
_OF: Counter = Counter()  # examples of all processes per split function


@contextmanager
def collective():
    """Inside: every process runs the same code on the same data, so :func:`split` functions share their
    examples out (without a launcher: nothing changes). Inside the share of one process, it is off again."""
    token = _COLLECTIVE.set(_state() is not None)
    try:
        yield
    finally:
        _COLLECTIVE.reset(token)


def split(fn: Callable, over: Sequence[str], merge: Callable[[list], object] | None = None) -> Callable:
    """:func:`sharded` ``fn`` inside :func:`collective`, else ``fn`` itself: for library functions that any
    caller may use, also on one process alone.

    >>> split(lambda texts: [len(t) for t in texts], over=["texts"])(["ab", "c"])
    [2, 1]
    """
    split_fn = sharded(fn, over, merge)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return (split_fn if _COLLECTIVE.get() else fn)(*args, **kwargs)

    return wrapper


def work_note() -> str:
    """``explain: 4 of 7; predict_proba: 8 of 14`` — the examples this process handled per split function."""
    return "; ".join(f"{name}: {_WORK[name]} of {_OF[name]}" for name in _OF) or "no split work"


def wait_for_everyone() -> None:
    state = _state()
    if state is not None:
        state.wait_for_everyone()


def _shard_indices(n: int) -> list[int]:
    state = _state()
    if state is None:
        return list(range(n))
    with state.split_between_processes(list(range(n))) as indices:  # contiguous, rank order
        return list(indices)


def _gather(local) -> list:
    """``[result of process 0, result of process 1, ...]`` on every process."""
    if _state() is None:
        return [local]
    from accelerate.utils import gather_object

    return gather_object([local])


def total(value: int) -> int:
    """The sum of ``value`` over all processes (``value`` itself without a launcher): e.g. model evaluations.

    >>> total(3)
    3
    """
    return int(sum(_gather(int(value))))


def on_main(fn: Callable) -> Callable:
    """``fn`` run by the main process alone inside :func:`collective` (the others receive its result): for work that
    cannot be split without changing its result (a search whose random stream or cache runs across the examples)
    and should not be repeated by every process. Outside :func:`collective` or without a launcher: ``fn`` itself.

    >>> on_main(lambda texts: [t.upper() for t in texts])(["a"])
    ['A']
    """
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not _COLLECTIVE.get() or _state() is None:
            return fn(*args, **kwargs)
        token = _COLLECTIVE.set(False)  # inside: nothing is shared out (the others are not calling)
        try:
            local = fn(*args, **kwargs) if is_main_process() else None
        finally:
            _COLLECTIVE.reset(token)
        return _gather(local)[0]

    return wrapper


def map_examples(fn: Callable[[list[int]], Sequence], n: int) -> list:
    """``fn(indices)`` on each process's share of ``range(n)``; every process gets all results in order.

    ``fn`` returns one result per index (any picklable objects). Processes get contiguous shares.
    """
    indices = _shard_indices(n)
    local = list(fn(indices)) if indices else []
    if len(local) != len(indices):
        raise ValueError(f"fn returned {len(local)} results for {len(indices)} examples: expected one per example")
    return [item for part in _gather(local) for item in part]


def _take(value, indices: list[int]):
    """The rows ``indices`` of a per-example value: list / tuple / array, a dict of them, or None."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict):
        return {k: _take(v, indices) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return value[indices]
    if hasattr(value, "__getitem__") and hasattr(value, "__len__"):
        return [value[i] for i in indices]
    return value


def concat(parts: list):
    """Join per-process results of a per-example function: lists and arrays end to end, dicts key by key.

    >>> concat([{"d": np.array([1.0]), "w": [["a"]]}, {"d": np.array([2.0, 3.0]), "w": [["b"], ["c"]]}])
    {'d': array([1., 2., 3.]), 'w': [['a'], ['b'], ['c']]}
    """
    first = parts[0]
    if isinstance(first, dict):
        return {k: concat([p[k] for p in parts]) for k in first}
    if isinstance(first, np.ndarray):
        return np.concatenate(parts, axis=0)
    if isinstance(first, (list, tuple)):
        return [item for part in parts for item in part]
    if all(p == first for p in parts):  # a value that does not depend on the examples (e.g. a mode name)
        return first
    raise TypeError(f"cannot join per-process results of type {type(first).__name__} that differ ({parts[:2]!r}): "
                    "expected per-example lists, arrays or dicts of them; pass merge=...")


def sharded(fn: Callable, over: Sequence[str], merge: Callable[[list], object] | None = None) -> Callable:
    """``fn`` run on each process's share of the per-example arguments ``over``, results joined in order.

    The arguments named in ``over`` (lists, arrays, dicts of them, or None) are cut to the process's
    contiguous share of examples; ``merge`` joins the per-process results (default :func:`concat`), and
    every process returns the joined result. Without a launcher: ``fn`` itself.

    >>> import numpy as np
    >>> double = sharded(lambda texts, factor=2: np.array([len(t) * factor for t in texts]), over=["texts"])
    >>> double(["ab", "c"])
    array([4, 2])
    """
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _state() is None:
            return fn(*args, **kwargs)
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        n = len(bound.arguments[over[0]])
        if n == 0:  # nothing to share out (every process knows it)
            return fn(*bound.args, **bound.kwargs)
        indices = _shard_indices(n)
        name = getattr(fn, "__name__", "work")
        _WORK[name] += len(indices)
        _OF[name] += n
        local = None
        if indices:
            for key in over:
                bound.arguments[key] = _take(bound.arguments[key], indices)
            token = _COLLECTIVE.set(False)  # this process's share alone: nested split functions run whole
            try:
                local = fn(*bound.args, **bound.kwargs)
            finally:
                _COLLECTIVE.reset(token)
        parts = [p for p in _gather(local) if p is not None]
        return (merge or concat)(parts)

    return wrapper


__all__ = ["launch_mismatch", "map_examples", "total", "on_main", "sharded", "split", "collective", "concat", "is_main_process", "num_processes", "device",
           "takes_part", "wait_for_everyone", "note", "work_note", "process_index"]
