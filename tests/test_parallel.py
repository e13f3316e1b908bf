"""Data-parallel runs: 2 accelerate processes (gloo, CPU) write the single-process output; the helpers split in order.

accelerate 1.15's ``launch --cpu --num_processes 2`` starts one process (multi-CPU needs MPI there), so the
processes are started with ``--multi_gpu``, which on a machine without GPUs runs torchrun's CPU processes.
"""
import json
import os
import socket
import subprocess
import sys
import textwrap
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from textxai import parallel

TEXTS = ["the movie was wonderful", "a terrible boring film", "the food was not good but the service was lovely",
         "i hated it", "it was great", "a bad film", "the acting was good"]  # 7: shares of 4 and 3


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(args: list[str], cwd: Path, processes: int | None, launcher: str = "accelerate") -> subprocess.CompletedProcess:
    """``python -m textxai ...`` (processes=None), ``accelerate launch ... --num_processes K -m textxai ...`` or
    ``torchrun --nproc_per_node K -m textxai ...`` (launcher="torchrun")."""
    env = {**os.environ, "OMP_NUM_THREADS": "1",  # as torchrun sets it: same float32 sums in both runs
           "PYTHONPATH": os.pathsep.join([str(Path(parallel.__file__).parents[1]), os.environ.get("PYTHONPATH", "")])}
    if processes is None:
        cmd = [sys.executable, "-m", *args]
    elif launcher == "torchrun":
        cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(processes),
               "--master_port", str(free_port()), "-m", *args]
    else:
        cmd = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", str(processes),
               "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
               "--num_cpu_threads_per_process", "1", "--main_process_port", str(free_port()), "-m", *args]
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def assert_same(a, b, path="$", rel=1e-6):
    """Same JSON structure, keys in the same order, strings equal, numbers within ``rel`` (float noise)."""
    assert type(a) is type(b) or {type(a), type(b)} <= {int, float}, f"{path}: {a!r} vs {b!r}"
    if isinstance(a, dict):
        assert list(a) == list(b), f"{path}: keys differ"
        for k in a:
            assert_same(a[k], b[k], f"{path}.{k}", rel)
    elif isinstance(a, list):
        assert len(a) == len(b), f"{path}: lengths differ"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]", rel)
    elif isinstance(a, float):
        assert abs(a - b) <= rel * max(1.0, abs(a)), f"{path}: {a} vs {b}"
    else:
        assert a == b, f"{path}: {a!r} vs {b!r}"


@pytest.fixture(scope="module")
def workdir(sharp_bert_folder, tmp_path_factory):
    folder = tmp_path_factory.mktemp("parallel")
    (folder / "data.jsonl").write_text("".join(json.dumps({"text": t, "label": i % 2}) + "\n" for i, t in enumerate(TEXTS)))
    (folder / "shift.jsonl").write_text("".join(json.dumps({"text": t + " !"}) + "\n" for t in TEXTS))
    return folder, sharp_bert_folder


# batch size 1: float32 outputs of this sharp model move by ~1e-6 with the padding of a batch (as they do when
# batch_size changes in one process), and batches differ when the texts are split; one text per batch keeps
# the comparison about the splitting itself
@pytest.mark.long
@pytest.mark.parametrize("module, options", [
    ("naopc", ["--batch-size", "1", "--attribution-methods", "gradient", "omission", "--normalization", "auto", "--max-exact-words", "6",
               "--beam-size", "2"]),
    ("fim_difficulty", ["--batch-size", "1", "--label-column", "label", "--min-flip", "--tol", "0.05", "--shift-against", "shift.jsonl",
                        "--random-flips", "--trials", "3"]),
])
def test_two_processes_write_the_single_process_output(module, options, workdir):
    folder, model = workdir
    # --confidence-level 0: a BCa bootstrap interval over 7 texts jumps when ~1e-8 noise breaks a tie between a
    # resampled mean and the observed one; the intervals are computed from the gathered per-text values
    common = ["textxai", "run", module, "--model", model, "--data", "data.jsonl", "--no-progress",
              "--confidence-level", "0", *options]
    launch([*common, "--output", "one"], folder, None)
    two = launch([*common, "--output", "two"], folder, 2)
    one_json = json.loads((folder / "one" / f"{module}.json").read_text())
    two_json = json.loads((folder / "two" / f"{module}.json").read_text())
    # fim's float32 eigenvalues move by up to ~1e-6 (relative) in the distributed runtime itself: inside one
    # launch, a text's value is the same whether its process got all texts or its share (checked below with
    # map_examples/sharded); the launch environment alone shifts it, so fim is compared at 1e-5
    assert_same(one_json, two_json, rel=1e-6 if module == "naopc" else 1e-5)
    assert sorted(p.name for p in (folder / "two").iterdir()) == sorted(p.name for p in (folder / "one").iterdir())
    assert two.stdout.count("Wrote ") == 1  # the main process alone reports and writes
    for note in ("process 0 of 2: examples 0-3 of 7", "process 1 of 2: examples 4-6 of 7"):
        assert note in two.stderr
    if module == "naopc":  # both kinds of limits were exercised: exact (<= 6 words) and beam
        assert set(one_json["normalization_used"]) == {"exact", "beam"}


@pytest.fixture(scope="module")
def rest_workdir(workdir, tiny_gpt2_parts, tmp_path_factory):
    """toki_trust's data labelled with the model's own predictions (every training text correct: both classes have
    keywords; two assessed texts wrong), ceval's counterfactual column, a saved tiny GPT-2 for perplexities."""
    from helpers import save_model
    from textxai.classifier import as_classifier

    folder, model = workdir
    predicted = as_classifier(model).predict_proba(TEXTS, batch_size=1).argmax(axis=1).tolist()
    assert len(set(predicted)) == 2  # the sharp model predicts both classes on these texts
    rows = [{"text": t, "label": y, "truth": y if i not in (1, 4) else 1 - y, "cf": t.replace("the", "a")}
            for i, (t, y) in enumerate(zip(TEXTS, predicted))]
    (folder / "rest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    lm = save_model(*tiny_gpt2_parts, tmp_path_factory.mktemp("parallel_lm"))
    return folder, model, lm


REST = {  # every module that ran on the main process alone before
    "toki_trust": ["--label-column", "truth", "--train-data", "rest.jsonl", "--explainer", "omission", "--embedders", "glove",
                   "--class-names", "negative,bad,terrible", "positive,good,wonderful"],
    "ceval": ["--editor", "deletion", "--n-counterfactuals", "2", "--lm", "{lm}"],
    "inconsistency": ["--editor", "deletion", "--steps", "2", "--n", "1", "2", "--lm", "{lm}"],
}


@pytest.mark.long
@pytest.mark.parametrize("module, launcher", [(m, "accelerate") for m in sorted(REST)] + [("inconsistency", "torchrun")])
def test_every_other_module_splits_and_writes_the_single_process_output(module, launcher, rest_workdir):
    folder, model, lm = rest_workdir
    options = [o.format(lm=lm) for o in REST[module]]
    if launcher == "torchrun":  # torchrun's own parser refuses --n (a prefix of its --nnodes, --nproc-per-node ...)
        at = options.index("--n")
        options = options[:at] + options[at + 3:]
    common = ["textxai", "run", module, "--model", model, "--data", "rest.jsonl", "--no-progress", "--batch-size", "1",
              "--confidence-level", "0", *options]
    launch([*common, "--output", f"one_{module}_{launcher}"], folder, None)
    two = launch([*common, "--output", f"two_{module}_{launcher}"], folder, 2, launcher)
    one_json = json.loads((folder / f"one_{module}_{launcher}" / f"{module}.json").read_text())
    two_json = json.loads((folder / f"two_{module}_{launcher}" / f"{module}.json").read_text())
    assert_same(one_json, two_json)
    assert two.stdout.count("Wrote ") == 1  # the main process alone writes
    # the work of each process, reported on stderr: shares of every split function add up to its total
    notes = [line.split("work of this process: ", 1)[1] for line in two.stderr.splitlines() if "work of this process" in line]
    assert len(notes) == 2 and "process 0 of 2: " in two.stderr and "process 1 of 2: " in two.stderr
    shares: dict = {}
    for note in notes:
        for part in note.split("; "):
            name, counts = part.split(": ")
            done, of = map(int, counts.split(" of "))
            shares.setdefault(name, []).append((done, of))
    expected = {"toki_trust": {"explain"}, "ceval": {"generate", "predict_proba", "perplexity"},
                "inconsistency": {"feedback_chains", "perplexity"}}[module]
    assert set(shares) == expected, shares
    for name, pairs in shares.items():
        assert all(0 < done < of for done, of in pairs) and sum(d for d, _ in pairs) == pairs[0][1], (name, pairs)
    if module == "toki_trust":
        assert one_json["n_correct"] == 5 and set(one_json["keywords"]) == {"negative", "positive"}


def test_map_examples_under_accelerate_splits_and_keeps_order(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        import json, os
        from textxai import parallel

        rank = int(os.environ["RANK"])
        rows = parallel.map_examples(lambda indices: [(i, rank) for i in indices], 5)
        joined = parallel.sharded(lambda texts, scale: {"n": [len(t) * scale for t in texts], "mode": "x"},
                                  over=["texts"])(["a", "bb", "ccc"], 2)
        if parallel.is_main_process():
            json.dump({"rows": rows, "joined": joined, "k": parallel.num_processes()}, open("out.json", "w"))
    """))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(parallel.__file__).parents[1]),
                                                        os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
           "--mixed_precision", "no", "--dynamo_backend", "no", "--num_cpu_threads_per_process", "1",
           "--main_process_port", str(free_port()), str(script)]
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["k"] == 2
    assert out["rows"] == [[0, 0], [1, 0], [2, 0], [3, 1], [4, 1]]  # contiguous shares, rank order
    assert out["joined"] == {"n": [2, 4, 6], "mode": "x"}


class FakeState:
    """Process ``rank`` of ``k``, with accelerate's own split rule; gathering returns the other ranks' results."""

    def __init__(self, rank, k, others):
        self.process_index, self.num_processes, self.others = rank, k, others
        self.is_main_process = rank == 0

    @contextmanager
    def split_between_processes(self, inputs):
        from accelerate import PartialState

        yield PartialState.split_between_processes.__wrapped__(self, inputs).__next__()


def test_sharded_cuts_every_per_example_argument(monkeypatch):
    seen = []

    def fn(texts, clf, pairs=None, attributions=None, factor=1):
        seen.append((texts, pairs, attributions))
        return {"d": np.arange(len(texts)) * factor, "rows": list(texts)}

    parts = {}
    for rank in (0, 1):
        monkeypatch.setattr(parallel, "_state", lambda rank=rank: FakeState(rank, 2, None))
        monkeypatch.setattr(parallel, "_gather", lambda local: [local])
        parts[rank] = parallel.sharded(fn, over=["texts", "pairs", "attributions"])(
            TEXTS[:5], "clf", pairs=list("abcde"), attributions={"given": [[1], [2], [3], [4], [5]], "method": None},
            factor=10)
    assert seen == [(TEXTS[:3], list("abc"), {"given": [[1], [2], [3]], "method": None}),
                    (TEXTS[3:5], list("de"), {"given": [[4], [5]], "method": None})]
    joined = parallel.concat([parts[0], parts[1]])
    np.testing.assert_array_equal(joined["d"], [0, 10, 20, 0, 10])
    assert joined["rows"] == TEXTS[:5]


def test_concat_refuses_values_that_are_not_per_example():
    with pytest.raises(TypeError, match="cannot join per-process results of type float"):
        parallel.concat([{"mean": 0.5}, {"mean": 0.25}])
    with pytest.raises(ValueError, match="fn returned 1 results for 3 examples"):
        parallel.map_examples(lambda indices: [0], 3)


def test_docstrings():
    import doctest

    assert doctest.testmod(parallel).failed == 0


@pytest.mark.long
def test_audit_splits_every_stage_and_writes_the_single_process_report(rest_workdir):
    """`accelerate launch -m textxai audit`: every stage's per-text work is shared out (difficulty, flips, NAOPC,
    the explanations of TOKI, the editors' calls, the shortcut flips) and the main process writes the same
    audit.json as one process (work timings aside), the evaluations of both processes added up."""
    folder, model, _ = rest_workdir
    common = ["textxai", "audit", "--model", model, "--data", "rest.jsonl", "--label-column", "truth", "--no-progress",
              "--run.batch_size", "1", "--difficulty.batch_size", "1", "--difficulty.test_set_size", "2",
              "--faithfulness.methods", "omission", "gradient", "--faithfulness.max_exact_words", "6",
              "--trust.class_names", "negative,bad,terrible", "positive,good,wonderful", "--trust.attack_texts", "2",
              "--counterfactual.editors", "deletion"]
    launch([*common, "--output", "audit_one"], folder, None)
    two = launch([*common, "--output", "audit_two"], folder, 2)
    one_json = json.loads((folder / "audit_one" / "audit.json").read_text())
    two_json = json.loads((folder / "audit_two" / "audit.json").read_text())
    evaluations = []
    for data in (one_json, two_json):
        data["work"].pop("seconds"), data["work"].pop("stage_seconds")
        data["work"].pop("planned_seconds"), data["work"].pop("probe")   # measured times of this machine and moment
        evaluations.append({stage: work.pop("evaluations") for stage, work in data["work"]["stages"]["model"].items()})
        for work in data["work"]["stages"]["model"].values():
            work.pop("seconds"), work.pop("cpu_seconds", None)   # measured times of this machine and moment
        data["work"].pop("evaluations")
    assert_same(one_json, two_json, rel=1e-5)  # fim's float32 eigenvalues: see the test above
    # the work of both processes added up: never less than one process spends; where a stage predicts texts whole on
    # every process (TOKI's training and assessed texts) or a process remembers only its own rows (the rows one stage
    # scored and a later one asks again: textxai.batching.remembered_rows; the editors' candidates), two spend more
    assert all(evaluations[0][s] <= evaluations[1][s] for s in evaluations[0]), evaluations
    assert (folder / "audit_two" / "index.html").is_file()
    assert two.stderr.count("process 0 of 2: examples 0-3 of 7") == 1 and "process 1 of 2: examples 4-6 of 7" in two.stderr
    assert two.stdout.count("Wrote ") == 0 and two.stderr.count("Wrote ") == 1  # the main process alone writes


def test_accelerate_cpu_with_k_processes_says_it_runs_one():
    """`accelerate launch --cpu --num_processes 2 -m textxai run ...` silently started ONE process (accelerate's
    --cpu picks its simple launcher, which passes nothing of K on). The child now reads its launcher's command
    line and says so, naming the command that does start K CPU processes."""
    import subprocess
    import sys

    child = "from textxai import parallel; print(parallel.launch_mismatch())"
    parent = (f"import subprocess, sys; sys.exit(subprocess.run([sys.executable, '-c', {child!r}]).returncode)")
    env = {k: v for k, v in os.environ.items() if k not in ("WORLD_SIZE",)}
    for argv, use_cpu, expected in (
            (["--cpu", "--num_processes", "2", "-m", "textxai", "run", "naopc"], "True",
             "accelerate launch --cpu --num_processes 2 started ONE process: accelerate's --cpu launcher runs a single "
             "process (without MPI); for 2 CPU processes use: torchrun --nproc_per_node 2 -m textxai run naopc"),
            (["--cpu", "--num_processes=1", "-m", "textxai"], "True", "None"),
            (["--cpu", "--num_processes", "3"], None, "None")):   # not started by accelerate
        run_env = dict(env, **({"ACCELERATE_USE_CPU": use_cpu} if use_cpu else {}))
        run_env.pop("ACCELERATE_USE_CPU", None) if use_cpu is None else None
        out = subprocess.run([sys.executable, "-c", parent, *argv], capture_output=True, text=True, env=run_env,
                             timeout=120)
        assert out.stdout.strip() == expected, out.stderr
