"""The meaning check of the audit's attack (textxai.audit.meaning) on a set of swaps labelled by hand: the three
cases the outside review found counted as attack successes (antonyms, sentiment-intensity changes, ungrammatical
edits) and swaps that keep the meaning. The measured rates are asserted (no entailment model installs offline)."""
from __future__ import annotations

import pytest

from textxai.audit.meaning import check_edit, check_swap

KEEPS = [("film", "movie", "a good film with a fine cast"), ("story", "tale", "i loved the story"),
         ("actor", "performer", "the actor is funny"), ("dull", "boring", "the plot is dull and slow"),
         ("funny", "amusing", "a funny script"), ("great", "terrific", "a great cast"),
         ("big", "large", "a big mistake"), ("quickly", "rapidly", "it was quickly forgotten"),
         ("director", "filmmaker", "the director made it"), ("plan", "scheme", "a plan to escape"),
         ("masterpiece", "film", "a true masterpiece"), ("love", "like", "i love it"),
         ("amazing", "nice", "an amazing cast"), ("superb", "fine", "superb acting"),
         ("begin", "start", "the scenes begin slowly"), ("small", "little", "a small town")]
ANTONYMS = [("bad", "good", "a bad film"), ("love", "hate", "i love it"), ("best", "worst", "the best scene"),
            ("beautiful", "ugly", "a beautiful score"), ("boring", "fun", "a boring plot")]
INTENSITY = [("brilliant", "pretty", "the brilliant finale"), ("excellent", "decent", "excellent acting"),
             ("awful", "mediocre", "an awful script"), ("great", "okay", "a great ending"),
             ("terrible", "bad", "a terrible film"), ("hate", "dislike", "i hate it")]
UNGRAMMATICAL = [("stick", "stuck", "made me stick to a plan"),
                 ("instead", "easily", "lectures the audience instead of telling"),
                 ("movie", "movies", "the movie is long"), ("rather", "quite", "rather than laugh"),
                 ("stick", "instead", "made me stick to a plan")]


def test_the_meaning_check_on_hand_labelled_swaps():
    kept = [w for w, s, t in KEEPS if check_swap(w, s, t) is None]
    rejected = {name: [(w, s) for w, s, t in cases if check_swap(w, s, t) is not None]
                for name, cases in (("antonyms", ANTONYMS), ("intensity", INTENSITY), ("ungrammatical", UNGRAMMATICAL))}
    # measured: every antonym (5), intensity change (6) and ungrammatical edit (5) of the set rejected, all 16
    # meaning-keeping swaps kept. Labelled as keeping the meaning, but borderline: love -> like, amazing -> nice and
    # superb -> fine weaken the sentiment a little (GloVe's axis moves them by less than 0.09; the limit is 0.15)
    assert {k: len(v) for k, v in rejected.items()} == {"antonyms": 5, "intensity": 6, "ungrammatical": 5}
    assert len(kept) == len(KEEPS), [w for w, s, t in KEEPS if check_swap(w, s, t) is not None]


def test_the_three_edits_the_review_found_are_rejected_with_reasons():
    for original, swaps, reason in (
            ("made me stick to a plan", [("stick", "stuck"), ("plan", "package")], "another form of the same word"),
            ("lectures the audience instead of telling", [("instead", "easily")], "fixed expression 'instead of'"),
            ("the brilliant finale", [("brilliant", "pretty")], "sentiment's strength")):
        got = check_edit(original, swaps)
        assert not got["kept"] and any(reason in r for r in got["reasons"]), got
    assert check_edit("a good film", [("film", "movie")]) == {"kept": True, "reasons": []}


@pytest.mark.parametrize("word", ["good", "Film", "the"])
def test_a_word_for_itself_keeps_the_meaning(word):
    assert check_swap(word, word.lower()) is None
