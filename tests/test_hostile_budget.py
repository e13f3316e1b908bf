"""Work budgets (issue 15 item 2): the work a request implies is estimated before it runs, by one function per
module (textxai.estimates) shared by the CLI and the Spaces; the estimate bounds the work really done; the
counting budget is the backstop; every long loop is stopped within one batch of its wall-time budget."""
from __future__ import annotations

import pytest

from textxai import batching, cli, estimates, tables
from textxai.batching import WorkBudgetExceeded, work_budget
from textxai.classifier import TextClassifier
from textxai.naopc.method import naopc_evaluations

TEXTS = ["a wonderful and moving film", "the plot was thin and dull", "great acting, weak script"]


@pytest.fixture
def forward_calls(monkeypatch):
    """Counts the batched model passes of every TextClassifier."""
    calls = []
    real = TextClassifier._proba_of_rows

    def rows(self, *args, **kwargs):
        calls.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(TextClassifier, "_proba_of_rows", rows)
    return calls


def _csv(tmp_path, texts=TEXTS, **columns) -> str:
    import csv

    path = tmp_path / "data.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", *columns])
        for i, text in enumerate(texts):
            writer.writerow([text, *(values[i] for values in columns.values())])
    return str(path)


def test_cli_refuses_a_run_estimated_above_max_evaluations_before_any_model_call(tmp_path, tiny_bert_folder,
                                                                                 forward_calls, capsys):
    data = _csv(tmp_path)
    code = cli.main(["run", "naopc", "--model", tiny_bert_folder, "--data", data, "--output", str(tmp_path / "o"),
                     "--no-progress", "--attribution-methods", "lime", "--max-evaluations", "100"], one_line_errors=True)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and forward_calls == []
    expected = naopc_evaluations([estimates.approx_words(t) for t in TEXTS], "auto", None, 12, ["lime"])
    assert f"--max-evaluations 100: textxai run naopc needs about {expected:,} model evaluations" in err[0]
    assert expected > 100 and not (tmp_path / "o" / "naopc.json").exists()


def test_cli_counting_budget_is_the_backstop(tmp_path, tiny_bert_folder, monkeypatch, capsys):
    monkeypatch.setattr(estimates, "for_run", lambda *args, **kwargs: 0)  # an estimate that is (wrongly) too low
    code = cli.main(["run", "naopc", "--model", tiny_bert_folder, "--data", _csv(tmp_path), "--output",
                     str(tmp_path / "o"), "--no-progress", "--max-evaluations", "3"], one_line_errors=True)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and "the budget is 3 (--max-evaluations)" in err[0]


def _run_counted(argv, tiny_bert_folder):
    """Run ``textxai run`` argv with a counting budget: (evaluations counted, the CLI's estimate)."""
    from textxai.classifier import as_classifier

    args = cli.build_parser().parse_args(argv + ["--model", tiny_bert_folder, "--no-progress", "--confidence-level", "0"])
    texts, pairs, labels = tables.load_table(args.data, args.text_column, args.pair_column, args.label_column, args.split,
                                          args.limit)
    classifier = as_classifier(args.model)
    estimate = estimates.for_run(args.module, args, texts, pairs, classifier)
    with work_budget() as budget:
        cli.runner(args.module).run(args, texts, pairs, labels, classifier)
    return budget.used, estimate


RUNS = {
    "naopc exact, two methods": ["naopc", "--attribution-methods", "omission", "integrated_gradients"],
    "naopc beam": ["naopc", "--attribution-methods", "gradient", "--normalization", "beam", "--beam-size", "3"],
    "naopc lime, no limits": ["naopc", "--attribution-methods", "lime", "--normalization", "none"],
    "fim with flips": ["fim_difficulty", "--min-flip", "--random-flips", "--trials", "4"],
    "inconsistency editor": ["inconsistency", "--steps", "2"],
    "ceval columns": ["ceval", "--counterfactual-column", "cf"],
    "ceval editor": ["ceval", "--n-counterfactuals", "2"],
    "toki omission + attack": ["toki_trust", "--explainer", "omission", "--embedders", "classifier", "--attack", "2",
                               "--label-column", "label", "--max-rate", "0.3", "--class-names", "bad", "good"],
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_the_estimate_bounds_the_work_really_done(name, tmp_path, tiny_bert_folder, request, capsys):
    from textxai.classifier import as_classifier

    argv = ["run", *RUNS[name]]
    texts = TEXTS + ["the acting was fine and the music lovely but the plot dragged on and on", "bad"]
    if "editor" in name:  # the editor's work per text is what is bounded: a long text and a one-word one suffice
        texts = texts[-2:]  # (tests/test_estimates.py bounds each editor call and chain on more texts)
    # toki: a tiny BERT with large weights, so that both classes are predicted
    model = request.getfixturevalue("sharp_bert_folder") if name.startswith("toki") else tiny_bert_folder
    labels = [str(int(y)) for y in as_classifier(model).predict(texts)]
    data = _csv(tmp_path, texts, cf=[t.replace("a", "the") for t in texts], label=labels)
    argv += ["--data", data, "--output", str(tmp_path / "o")]
    if name.startswith("toki"):
        argv += ["--train-data", data]
    used, estimate = _run_counted(argv, model)
    assert 0 < used <= estimate, (name, used, estimate)
    if name.startswith("fim"):  # FIM's work does not depend on the model's answers: every pass is priced and counted
        assert used == estimate, (used, estimate)
    if "editor" not in name:  # the editor's early stops (no replacement gains, a chain ends) make it cheaper
        assert estimate <= 12 * used + 100, (name, used, estimate)  # an upper bound, not a wild one


class SimulatedClock:
    """The budget's clock, advanced only by the slow fake model: ``per_token`` seconds per input token (a
    forward's cost grows with its tokens, rows x padded length)."""

    def __init__(self, per_token: float):
        self.now, self.per_token = 0.0, per_token

    def __call__(self) -> float:
        return self.now

    def hook(self, module, args, kwargs, output):
        x = kwargs.get("input_ids")
        x = kwargs.get("inputs_embeds") if x is None else x
        self.now += x.shape[0] * x.shape[1] * self.per_token


@pytest.fixture
def slow_model(sharp_bert_folder, monkeypatch):
    """A classifier that 'takes' 1 ms per token (~50 rows of 20 tokens per second) on a simulated clock."""
    clock = SimulatedClock(1e-3)
    clf = TextClassifier(sharp_bert_folder)
    handle = clf.model.register_forward_hook(clock.hook, with_kwargs=True)
    monkeypatch.setattr(batching, "_clock", clock)
    yield clf, clock
    handle.remove()


LONG = "the plot was thin but the acting was wonderful and the music was moving in every scene of it"


def _long_loop(clf, loop: str):
    """The call of ``loop`` (anything it needs beforehand, such as a keyword index, is built here)."""
    from textxai import attribution, inconsistency, naopc, toki
    if loop == "naopc beam steps":
        return lambda: naopc.compute([LONG], [[0.1] * len(clf.words(LONG))], clf, normalization="beam",
                                           beam_size=20)
    if loop == "lime samples":
        return lambda: attribution.word_attributions([LONG], clf, "lime")
    if loop == "feedback chains":  # an editor proposing one edit per word (the built-in one finds none in a tiny vocabulary)
        def editor(texts):
            return [[" ".join(w if j != i else "film" for j, w in enumerate(t.split())) for i in range(len(t.split()))]
                    for t in texts]

        return lambda: inconsistency.feedback_chains(editor, [LONG] * 4, clf, steps=10, progress=False)
    train = ["bad", "a wonderful and moving film"]  # the sharp tiny model predicts both classes on these
    index = toki.build_keyword_index(clf, train, [int(p) for p in clf.predict(train)], explainer="omission",
                                     embedders=["classifier"], class_names=["bad", "good"])
    return lambda: toki.toki_attack(clf, [LONG] * 6, index, embedders=["classifier"], max_rate=1.0, min_similarity=-1.0)


@pytest.mark.parametrize("loop", ["naopc beam steps", "lime samples", "feedback chains", "toki attack search"])
def test_every_long_loop_stops_within_one_batch_of_its_time_budget(slow_model, loop):
    clf, clock = slow_model
    run = _long_loop(clf, loop)
    budget = 0.3  # 300 tokens
    start = clock.now
    with pytest.raises(WorkBudgetExceeded, match="stopped after 0.3 s"):
        with work_budget(seconds=budget, what="this request"):
            run()
    overshoot = clock.now - start - budget  # at most one batch (its tokens capped under a deadline) + one gradient pass
    assert overshoot <= (batching.DEADLINE_BATCH_TOKENS + 64) * clock.per_token, f"{loop}: ran {overshoot:.2f} s past"
