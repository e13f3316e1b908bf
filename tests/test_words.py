import pytest
from hypothesis import given, settings, strategies as st

from textxai import words
from helpers import edit_distance




token_lists = st.lists(st.sampled_from(["the", "a", "film", "good", "bad", "not", ".", " ", "x"]), max_size=12)


@settings(max_examples=200, deadline=None)
@given(token_lists, token_lists)
def test_word_distance_equals_dynamic_program(a, b):
    assert words.word_distance(a, b) == edit_distance(a, b)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="ab .,'\n", max_size=30), st.text(alphabet="ab .,'\n", max_size=30))
def test_distance_of_strings_is_distance_of_their_tokens(a, b):
    for keep in (False, True):
        ta, tb = words.tokenize(a, keep_whitespace=keep), words.tokenize(b, keep_whitespace=keep)
        assert words.word_distance(a, b, keep_whitespace=keep) == edit_distance(ta, tb)


def test_spacy_tokens_and_spans():
    text = "I don't  like it.\nReally!"
    spans = words.word_spans(text)
    assert [w for w, _, _ in spans] == ["I", "do", "n't", "like", "it", ".", "Really", "!"]
    assert all(text[s:e] == w for w, s, e in spans)
    assert words.tokenize(text, keep_whitespace=True) == ["I", "do", "n't", " ", "like", "it", ".", "\n", "Really", "!"]
    assert words.tokenize(text, method="whitespace") == ["I", "don't", "like", "it.", "Really!"]
    assert words.tokenize("") == []


def test_normalized_distance_divides_by_first_text_length():
    assert words.word_distance_normalized("a b c d", "a x c") == pytest.approx(2 / 4)
    assert words.word_distance_normalized("", "a") != words.word_distance_normalized("", "a")  # nan


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="method='bert'"):
        words.tokenize("a", method="bert")
    with pytest.raises(TypeError, match="text=None"):
        words.tokenize(None)
    with pytest.raises(TypeError, match="a=3"):
        words.word_distance(3, "a")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab:)(;'.!- \n", max_size=25), min_size=1, max_size=6))
def test_tokenize_many_equals_tokenize_on_each_text(texts):
    for method in ("spacy", "whitespace"):
        assert words.tokenize_many(texts, method) == [words.tokenize(t, method) for t in texts]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab .,:)'\n", max_size=30), st.text(alphabet="ab .,:)'\n", max_size=30))
def test_string_fast_path_equals_word_list_distance(a, b):
    for keep in (False, True):
        assert words.word_distance(a, b, keep_whitespace=keep) == edit_distance(
            words.tokenize(a, keep_whitespace=keep), words.tokenize(b, keep_whitespace=keep))


def test_tokenize_remembers_each_text():
    # a decorator moved onto another function once left the word tokenizer uncached (spaCy again per call)
    words._tokenize_cached.cache_clear()
    words.tokenize("a fine film, well shot")
    words.tokenize("a fine film, well shot")
    assert words._tokenize_cached.cache_info().hits == 1
    assert not hasattr(words.separated, "cache_info")  # texts as keys: an unbounded share of memory for a cheap call
