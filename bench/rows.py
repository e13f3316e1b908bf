"""The benchmark rows' shared type: one line of the one table of `make bench` (bench/report.py).

Below every benchmark that produces a row (bench_ceval, bench_fim, bench_inconsistency, bench_lm, bench_toki and
report itself): they import it from here, and report imports them, so no benchmark imports report.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Row:
    workload: str
    peer: str
    peer_figure: str
    ours: str
    ratio: str
