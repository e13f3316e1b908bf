"""The one progress bar of textxai: every long loop goes through :func:`progress_bar` (tqdm, off unless asked).

>>> list(progress_bar(range(3), enabled=False))    # disabled: the iterable itself, tqdm not even imported
[0, 1, 2]
>>> bar = progress_bar(total=2, enabled=False)      # no iterable: a bar to update() by hand
>>> bar.update(1); bar.close()
"""
from __future__ import annotations

from collections.abc import Iterable


def progress_bar(iterable: Iterable | None = None, enabled: bool = False, desc: str | None = None,
                 total: int | None = None, unit: str = "it"):
    """``iterable`` with a tqdm bar (``tqdm.auto``: a widget in notebooks) when ``enabled``, else as it is.

    Args:
        iterable: what to loop over; ``None`` returns a bar to advance with ``update(n)`` and ``close()``
            (a disabled tqdm bar when not ``enabled``, so calling code needs no branch).
        enabled: show the bar (every textxai function's ``progress=`` switch).
        desc: the bar's label, e.g. ``"fim difficulty"``.
        total: the number of steps when ``iterable`` has no length (or for a hand-driven bar).
        unit: what one step is (``"batch"``, ``"text"``, ``"step"``...).
    """
    if iterable is not None and not enabled:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, total=total, unit=unit, disable=not enabled)


THIRD_PARTY_SWITCH = "TQDM_DISABLE"


def third_party_bars_quiet() -> dict:
    """Quiet the progress bars of the libraries textxai calls (transformers' GGUF de-quantization, Hub
    downloads, datasets) for a command's run, unless the user set ``TQDM_DISABLE`` (``TQDM_DISABLE=0`` shows
    them). textxai's own bars pass ``disable=`` explicitly and are not affected. Returns the variables set, for
    :func:`restore`."""
    import os

    changed = {}
    for key in (THIRD_PARTY_SWITCH, "HF_HUB_DISABLE_PROGRESS_BARS", "HF_DATASETS_DISABLE_PROGRESS_BARS"):
        if key not in os.environ and (key == THIRD_PARTY_SWITCH or THIRD_PARTY_SWITCH not in os.environ):
            changed[key] = None
            os.environ[key] = "1"
    return changed


def restore(changed: dict) -> None:
    import os

    for key, value in changed.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
