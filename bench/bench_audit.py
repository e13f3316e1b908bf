"""The whole audit of the demo's held-out texts, as the README states it: time and model evaluations per stage,
then the same command again (every stage resumed from the cache in the output folder: the ratio is what an
interrupted audit saves), and a screenshot of the report with headless chromium.

    .venv/bin/python bench/bench_audit.py [--output audit] [--screenshot docs/audit-report.png] [--limit N]
    .venv/bin/python bench/bench_audit.py --imdb 200 --screenshot ""     # issue 26: 200 IMDb-length reviews
    .venv/bin/python bench/bench_audit.py --imdb 200 --screenshot "" --model demo-folder   # ... as a user's model
    .venv/bin/python bench/bench_audit.py --imdb 200 --screenshot "" --profile quick       # ... the quick profile

runs ``textxai audit --model textxai/demo-sentiment --data <held-out texts> --label-column label --output audit``
with the default options (the held-out texts are written to ``<output>/heldout.jsonl`` first). ``--imdb N``
audits the first N of CEval's reference IMDb test reviews instead (../shared/reference; 163 words on average).
"""
from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from textxai import demo

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_texts import imdb_labelled  # noqa: E402
from textxai.cli import main as textxai


def heldout(folder: Path, limit: int | None, imdb: int | None = None) -> Path:
    if imdb:
        rows = imdb_labelled()[:imdb]
        if len(rows) < imdb:
            raise SystemExit(f"--imdb {imdb}: the reference data holds {len(rows)} IMDb reviews (../shared/reference)")
    else:
        corpus = demo.load_corpus("sentiment")
        rows = list(zip(corpus["test_texts"], corpus["test_labels"]))[:limit]
    path = folder / "heldout.jsonl"
    path.write_text("".join(json.dumps({"text": t, "label": int(y)}) + "\n" for t, y in rows), encoding="utf-8")
    return path


def limit_row(n_reviews: int, seconds: float, evaluations: int, cpu_seconds: float | None = None,
              limit_minutes: float = 10.0):
    """The audit's row of `make bench` (bench/report.py): the default audit of ``n_reviews`` IMDb reviews against
    issue 42's limit, 10 minutes per 200 reviews on 2 cores (scaled by N / 200 for a smaller run); the process's CPU
    seconds beside the wall time (a contended run's wall time says little)."""
    from rows import Row

    limit = limit_minutes * 60 * n_reviews / 200
    cpu = "" if cpu_seconds is None else f" ({cpu_seconds:.0f} s CPU)"
    return Row(f"audit, default options, {n_reviews} IMDb reviews (bench_audit.py --imdb {n_reviews})",
               "target: 10 min per 200 reviews on 2 cores (s)", f"{limit:.0f}",
               f"{seconds:.0f} s{cpu}, {evaluations:,} model evaluations", f"{limit / seconds:.2f}x the limit")


def screenshot(page: Path, png: Path) -> None:
    png.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=1100,1900", f"--screenshot={png}", page.resolve().as_uri()],
                   check=True, capture_output=True, timeout=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="audit")
    parser.add_argument("--screenshot", default="docs/audit-report.png")
    parser.add_argument("--limit", type=int, default=None, help="only the first N held-out texts (default: all 90)")
    parser.add_argument("--imdb", type=int, default=None, metavar="N",
                        help="audit the first N of CEval's IMDb reviews (with their labels) instead of the held-out texts")
    parser.add_argument("--model", default="textxai/demo-sentiment",
                        help="the model audited; --model demo-folder: the demo model loaded from its folder, which the "
                             "audit treats as a user's model (TOKI's keyword index then learns from the audited texts)")
    parser.add_argument("--profile", default=None, help="the audit's --profile (default: none given, the full audit)")
    parser.add_argument("--keep-cache", action="store_true",
                        help="resume an interrupted bench (the per-stage times printed come from the cache files)")
    args = parser.parse_args()
    out = Path(args.output)
    if not args.keep_cache:
        shutil.rmtree(out / ".audit-cache", ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    model = args.model
    if model == "demo-folder":
        from textxai.classifier import as_classifier

        model = as_classifier("textxai/demo-sentiment").model.name_or_path
    command = ["audit", "--model", model, "--data", str(heldout(out, args.limit, args.imdb)),
               "--label-column", "label", "--output", str(out)] + (["--profile", args.profile] if args.profile else [])
    runs, cpu = [], []
    for _ in range(2):
        started, used = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        assert textxai(command) == 0
        runs.append(time.perf_counter() - started)
        now = resource.getrusage(resource.RUSAGE_SELF)
        cpu.append(now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime)
    data = json.loads((out / "audit.json").read_text())
    print(f"\ntextxai {' '.join(command)}")
    words = sorted(len(json.loads(line)["text"].split()) for line in (out / "heldout.jsonl").read_text().splitlines())
    print(f"{data['n_texts']} texts of {words[0]}-{words[-1]} words (median {words[len(words) // 2]}); planned (estimate) {sum(data['work']['planned']['model'].values()):,} model evaluations")
    stages = {}
    for f in sorted((out / ".audit-cache").glob("model-*.json")):
        saved = json.loads(f.read_text())
        name = f.stem.split("-", 1)[1]
        stages[name] = (saved["seconds"], saved.get("cpu_seconds"), saved["evaluations"],
                        data["work"]["planned"]["model"].get(name))
    for name, (seconds, cpu_seconds, evaluations, planned) in stages.items():
        used = "" if cpu_seconds is None else f" ({cpu_seconds:.0f} s CPU)"
        print(f"  {name:<15} {seconds:8.1f} s{used}  {evaluations:>8,} evaluations counted  (estimated {planned or 0:,})")
    counted = sum(s[2] for s in stages.values())
    print(f"fresh audit {runs[0]:.1f} s wall, {cpu[0]:.0f} s CPU (load average {open('/proc/loadavg').read().split()[0]} "
          f"at the end; {counted:,} evaluations counted); "
          f"resumed from the cache {runs[1]:.1f} s: {runs[0] / runs[1]:.0f}x")
    print(f"report {(out / 'index.html').stat().st_size / 1e6:.2f} MB")
    if args.imdb and args.model == "textxai/demo-sentiment" and not args.profile and not args.limit:
        row = limit_row(args.imdb, runs[0], counted, cpu[0])   # the row `make bench` prints (bench/report.py)
        print(f"\n{row.workload} | {row.peer} | {row.peer_figure} | {row.ours} | {row.ratio}")
    if args.screenshot:
        screenshot(out / "index.html", Path(args.screenshot))
        print(f"screenshot {args.screenshot}")


if __name__ == "__main__":
    main()
