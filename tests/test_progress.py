"""textxai.progress: the one progress bar (off by default, tqdm when asked)."""
import numpy as np

from textxai.progress import progress_bar


def test_disabled_returns_the_iterable_itself():
    items = iter([1, 2, 3])
    assert progress_bar(items, enabled=False, desc="x") is items
    bar = progress_bar(total=3, enabled=False)  # hand-driven, disabled: still updatable
    bar.update(2)
    bar.close()


def test_enabled_shows_desc_and_counts(capsys):
    assert list(progress_bar(range(4), True, "counting", unit="batch")) == [0, 1, 2, 3]
    err = capsys.readouterr().err
    assert "counting" in err and "4/4" in err and "batch" in err
    bar = progress_bar(total=3, enabled=True, desc="steps")
    bar.update(1)
    bar.update(2)
    bar.close()
    assert "3/3" in capsys.readouterr().err


def test_a_library_loop_reports_through_it(bert_clf, capsys):
    from textxai import fim

    quiet = fim.difficulty(["good", "a bad film"], bert_clf, batch_size=1)
    assert capsys.readouterr().err == ""
    shown = fim.difficulty(["good", "a bad film"], bert_clf, batch_size=1, progress=True)
    assert "fim difficulty" in capsys.readouterr().err
    np.testing.assert_array_equal(quiet["difficulty"], shown["difficulty"])
