"""One classifier shared by threads: the same answers as one thread, and what the per-model lock costs.

    python bench/bench_threads.py          # the demo sentiment model; ~1-2 min on 2 cores

Runs 20 calls (integrated gradients, FIM difficulty, probabilities; one demo text each) once to warm up, then
one after the other in one worker thread, then from 20 threads at once on the same ``TextClassifier``; prints
both wall times, their ratio and whether every threaded answer equals the serial one. Forward passes of one
model take turns (the lock in ``textxai.classifier.frozen_eval``) while tokenizing and the rest overlap.
2026-11-24, the shared 2-core machine: one thread 9.45 s, 20 threads 6.52 s (ratio 0.69), answers equal. (The same
serial loop in the main thread took 37.7 s there: torch's intra-op pool of the main thread on a busy machine.)
"""
from __future__ import annotations

import threading
import time

import numpy as np


def main() -> None:
    from textxai import demo, fim
    from textxai.attribution import word_attributions
    from textxai.classifier import as_classifier

    clf = as_classifier("textxai/demo-sentiment")
    texts = demo.demo_texts("sentiment", 20)
    jobs = [lambda t: word_attributions([t], clf, "integrated_gradients")[0],
            lambda t: fim.difficulty([t], clf)["difficulty"],
            lambda t: clf.predict_proba([t])[0]]
    calls = [(jobs[i % 3], texts[i]) for i in range(20)]
    for job, text in calls:  # warm-up: imports, word encodings, and the kernels of every input shape
        job(text)
    serial: list = []

    def one_thread():  # in one worker thread, as the 20 below (torch's intra-op pool behaves alike)
        serial.extend(np.asarray(job(text)) for job, text in calls)

    worker = threading.Thread(target=one_thread)
    began = time.perf_counter()
    worker.start()
    worker.join()
    serial_seconds = time.perf_counter() - began
    threaded: list = [None] * 20

    def run(i):
        job, text = calls[i]
        threaded[i] = np.asarray(job(text))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(20)]
    began = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    threaded_seconds = time.perf_counter() - began
    same = all(np.allclose(a, b, rtol=1e-5, atol=1e-7) for a, b in zip(serial, threaded))
    print(f"20 calls: serial {serial_seconds:.2f} s, 20 threads {threaded_seconds:.2f} s "
          f"(ratio {threaded_seconds / serial_seconds:.2f}); threaded answers equal serial: {same}")


if __name__ == "__main__":
    main()
