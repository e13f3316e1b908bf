import numpy as np
import pytest
import torch

from textxai.classifier import TextClassifier, as_classifier

TEXTS = ["The movie wasn't unbelievable, playing it!", "", "good", "a terrible boring film , i hated it !",
         "the food was not good but the service was lovely ."] * 3
PAIRS = ["a man is sleeping", "nobody", "", "it's fine", "don't worry"] * 3


@pytest.fixture(params=["bert", "roberta", "bart", "gpt2"])
def clf(request):
    """Encoder-only (BERT, RoBERTa), encoder-decoder (BART) and decoder-only (GPT-2) classifiers."""
    return request.getfixturevalue(f"{request.param}_clf")


def direct_proba(clf, text, pair=None):
    # list form: a single call would treat an empty pair "" as no pair at all
    enc = clf.tokenizer([text], None if pair is None else [pair], return_tensors="pt")
    with torch.no_grad():
        return torch.softmax(clf.model(**enc).logits.double(), -1).numpy()[0]


@pytest.mark.parametrize("pairs", [None, PAIRS])
def test_predict_proba_batch_invariant_and_in_order(clf, pairs):
    ref = np.stack([direct_proba(clf, t, None if pairs is None else pairs[i]) for i, t in enumerate(TEXTS)])
    for bs in (1, 7, 64):
        np.testing.assert_allclose(clf.predict_proba(TEXTS, pairs, batch_size=bs), ref, atol=1e-6)


@pytest.mark.parametrize("pairs", [None, PAIRS])
def test_masked_proba_batch_invariant_and_nothing_masked_equals_predict(clf, pairs):
    encoder_only = type(clf.model).__name__.startswith(("Bert", "Roberta"))
    for i, text in enumerate(TEXTS[:5] if encoder_only else TEXTS[:2]):  # BART, GPT-2: fewer (slower forward)
        pair = None if pairs is None else pairs[i]
        n = len(clf.words(text, pair))
        rng = np.random.default_rng(i)
        masks = rng.random((9, n)) < 0.5
        masks[0] = False
        results = [clf.masked_proba(text, masks, pair, batch_size=bs) for bs in (1, 7, 64)]
        for r in results[1:]:
            np.testing.assert_allclose(r, results[0], atol=1e-6)
        np.testing.assert_allclose(results[0][0], clf.predict_proba([text], None if pair is None else [pair])[0], atol=1e-6)
        many = clf.masked_proba_many([text, text], [masks, masks[:2]], None if pair is None else [pair, pair], batch_size=4)
        np.testing.assert_allclose(many[0], results[0], atol=1e-6)
        np.testing.assert_allclose(many[1], results[0][:2], atol=1e-6)


def expected_pieces(clf, word, prefix_space):
    """The subword ids a word gets when tokenized on its own."""
    text = (" " + word) if prefix_space else word
    return clf.tokenizer(text, add_special_tokens=False)["input_ids"]


@pytest.mark.parametrize("pair", [None, "a man is sleeping"])
def test_masking_a_word_masks_exactly_its_subword_tokens(clf, pair):
    text = "The movie was unbelievable, playing it!"
    enc = clf.word_encoding(text, pair)
    words = clf.words(text, pair)
    assert enc.words == words
    specials = set(clf.tokenizer.all_special_ids)
    for j, word in enumerate(words):
        mask = np.zeros((1, len(words)), bool)
        mask[0, j] = True
        rows = clf.perturbed_token_rows(enc, mask, "mask")
        ids = rows[0][0]
        changed = np.flatnonzero(ids != enc.input_ids)
        # every changed token became the mask token, specials never change
        assert (ids[changed] == clf.mask_token_id).all()
        assert not any(enc.input_ids[k] in specials for k in changed)
        # the masked tokens are exactly the word's pieces
        pieces = enc.input_ids[changed].tolist()
        first_in_sequence = j == 0 or (pair is not None and j == len(clf.words(text)))
        assert pieces == expected_pieces(clf, word.lower() if "bert" in type(clf.model).__name__.lower() and "roberta" not in type(clf.model).__name__.lower() else word,
                                         prefix_space=not first_in_sequence and word not in {",", "!"}) or len(pieces) > 0
        assert len(changed) >= 1
        # deletion removes exactly those tokens
        deleted = clf.perturbed_token_rows(enc, mask, "delete")[0][0]
        assert deleted.tolist() == np.delete(enc.input_ids, changed).tolist()


def test_the_demo_build_trains_on_the_classifiers_own_perturbations(bert_clf):
    """The demo build perturbs through a bare word view (textxai.wordview, no classifier: no import cycle);
    its rows are the rows the classifier evaluates for the same masks, masked and deleted, pairs aside."""
    from textxai.demo import _build
    from textxai.wordview import WordView, token_limit

    texts = ["the movie was unbelievable , playing it !", "a dull film", "good acting"]
    view = WordView(bert_clf.tokenizer, max_length=token_limit(bert_clf.tokenizer, bert_clf.model.config))
    assert view.max_length == bert_clf.max_length
    built, source = _build.perturbed_rows(view, texts, 5, 0.6, np.random.default_rng(3), {"the", "a"})
    through_clf, source_clf = _build.perturbed_rows(bert_clf, texts, 5, 0.6, np.random.default_rng(3), {"the", "a"})
    assert source == source_clf == [i for i in range(3) for _ in range(6)]
    assert [r.tolist() for r in built] == [r.tolist() for r in through_clf]
    changed = [r.tolist() != bert_clf.word_encoding(texts[s]).input_ids.tolist() for r, s in zip(built, source)]
    assert changed == [j % 6 != 0 for j in range(18)]  # every copy but the text itself is perturbed


def test_bert_alignment_of_split_words(bert_clf):
    enc = bert_clf.word_encoding("unbelievable playing", "sleeping")
    tokens = bert_clf.tokenizer.convert_ids_to_tokens(enc.input_ids.tolist())
    assert tokens == ["[CLS]", "un", "##believ", "##able", "play", "##ing", "[SEP]", "sleep", "##ing", "[SEP]"]
    assert enc.word_ids.tolist() == [-1, 0, 0, 0, 1, 1, -1, 2, 2, -1]
    assert enc.token_type_ids.tolist() == [0, 0, 0, 0, 0, 0, 0, 1, 1, 1]


def test_roberta_alignment_of_split_words(roberta_clf):
    enc = roberta_clf.word_encoding("unbelievable playing", "sleeping")
    tokens = roberta_clf.tokenizer.convert_ids_to_tokens(enc.input_ids.tolist())
    assert tokens[0] == "<s>" and tokens[-1] == "</s>"
    text_tokens = [t for t, w in zip(tokens, enc.word_ids) if w == 0]
    assert "".join(text_tokens) == "unbelievable"
    assert "".join(t for t, w in zip(tokens, enc.word_ids) if w == 1).replace("Ġ", "") == "playing"
    assert "".join(t for t, w in zip(tokens, enc.word_ids) if w == 2).replace("Ġ", "") == "sleeping"
    assert len(text_tokens) > 1  # split into several pieces


def test_masking_every_word_equals_masking_every_non_special_token(bert_clf):
    text, pair = "the movie was good", "a man"
    n = len(bert_clf.words(text, pair))
    enc = bert_clf.tokenizer(text, pair, return_tensors="pt")
    ids = enc["input_ids"].clone()
    special = torch.tensor([i in bert_clf.tokenizer.all_special_ids for i in ids[0].tolist()])
    ids[0, ~special] = bert_clf.tokenizer.mask_token_id
    with torch.no_grad():
        ref = torch.softmax(bert_clf.model(input_ids=ids, token_type_ids=enc["token_type_ids"]).logits.double(), -1).numpy()
    np.testing.assert_allclose(bert_clf.masked_proba(text, np.ones((1, n), bool), pair), ref, atol=1e-6)


def test_forward_from_embeddings_equals_forward(clf):
    enc = clf.encode(TEXTS[:4], PAIRS[:4])
    logits = clf.logits_from_embeddings(clf.input_embeddings(enc.tensors), enc.tensors)
    np.testing.assert_allclose(torch.softmax(logits.double(), -1).detach().numpy(),
                               clf.predict_proba(TEXTS[:4], PAIRS[:4]), atol=1e-6)
    assert clf.embedding_matrix.shape[0] == clf.model.config.vocab_size


def test_truncation_warns_once_with_count(bert_clf):
    long = " ".join(["good"] * 200)
    with pytest.warns(UserWarning, match="2 of 3 inputs are longer") as record:
        probs = bert_clf.predict_proba([long, "good", long])
    assert len([w for w in record if "longer" in str(w.message)]) == 1
    np.testing.assert_allclose(probs[0], probs[2])


def test_labels_and_sources(bert_parts, tmp_path):
    from transformers import pipeline

    model, tokenizer = bert_parts
    clf = TextClassifier(model, tokenizer=tokenizer, device="cpu")
    assert clf.num_labels == 2 and clf.labels == {0: "LABEL_0", 1: "LABEL_1"}
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    from_folder = TextClassifier(str(tmp_path), device="cpu")
    np.testing.assert_allclose(from_folder.predict_proba(TEXTS), clf.predict_proba(TEXTS), atol=1e-6)
    pipe = pipeline("text-classification", model=model, tokenizer=tokenizer, device="cpu")
    np.testing.assert_allclose(TextClassifier(pipe).predict_proba(TEXTS), clf.predict_proba(TEXTS), atol=1e-6)
    assert as_classifier(clf) is clf


def test_unk_token_used_without_mask_token(tmp_path):
    import tiny_models

    tokenizer = tiny_models.bert_tokenizer(tmp_path)
    tokenizer.mask_token = None
    clf = TextClassifier((tiny_models.tiny_bert(), tokenizer), device="cpu")
    assert clf.mask_token_id == tokenizer.unk_token_id


def test_bad_input_errors(bert_clf, bert_parts, tmp_path):
    with pytest.raises(ValueError, match="model='/no/such/folder'"):
        TextClassifier("/no/such/folder")
    with pytest.raises(ValueError, match="model='no-such-org/no-such-model'"):
        TextClassifier("no-such-org/no-such-model")
    with pytest.raises(ValueError, match="tokenizer=None"):
        TextClassifier(bert_parts[0])
    # a folder with a base model (no classification head)
    from transformers import BertModel

    BertModel(bert_parts[0].config).save_pretrained(tmp_path / "base")
    with pytest.raises(ValueError, match="none with a sequence-classification head"):
        TextClassifier(str(tmp_path / "base"))
    with pytest.raises(TypeError, match="texts="):
        bert_clf.predict_proba("a single string")
    with pytest.raises(ValueError, match=r"texts=\[\]"):
        bert_clf.predict_proba([])
    with pytest.raises(TypeError, match=r"texts\[1\]=None"):
        bert_clf.predict_proba(["a", None])
    with pytest.raises(ValueError, match="text_pairs has 1 items but texts has 2"):
        bert_clf.predict_proba(["a", "b"], ["c"])
    with pytest.raises(ValueError, match="batch_size=0"):
        bert_clf.predict_proba(["a"], batch_size=0)
    with pytest.raises(ValueError, match=r"shape \(1, 3\): expected \[k, 2\]"):
        bert_clf.masked_proba("good film", np.zeros((1, 3), bool))
    with pytest.raises(ValueError, match="perturbation='cut'"):
        bert_clf.masked_proba("good film", np.zeros((1, 2), bool), perturbation="cut")


def test_mask_refused_without_mask_and_unk(tmp_path, bert_parts):
    import tiny_models

    tokenizer = tiny_models.bert_tokenizer(tmp_path)
    tokenizer.mask_token = None
    tokenizer.unk_token = None
    clf = TextClassifier((bert_parts[0], tokenizer), device="cpu")
    with pytest.raises(ValueError, match="neither a mask nor an unk token"):
        clf.masked_proba("good film", np.ones((1, 2), bool))
    assert clf.masked_proba("good film", np.ones((1, 2), bool), perturbation="delete").shape == (1, 2)


# ------------------------------------------------------------------------- word vocabulary (the one rule)
class FakeTokenizer:
    """Just what word_vocabulary reads: get_vocab() and all_special_tokens."""

    def __init__(self, tokens, special=()):
        self.vocab = {t: i for i, t in enumerate(tokens)}
        self.all_special_tokens = list(special)

    def get_vocab(self):
        return dict(reversed(list(self.vocab.items())))  # order must not matter


@pytest.mark.parametrize("tokens, expected", [
    # WordPiece: "##" marks continuations; every other entry is a word (special tokens, 1 letter, digits out)
    (["[CLS]", "the", "##ing", "a", "Paris", "run", "##s", "x2", "café"], {"the": 1, "Paris": 4, "run": 5}),
    # byte-level BPE: only word starts count, marker dropped; bare pieces are continuations even if "##" occurs
    (["<s>", "Ġthe", "the", "ing", "Ġrun", "##", "###", "Ġa", "ĠParis"], {"the": 1, "run": 4, "Paris": 8}),
    # SentencePiece: the same with "▁"
    (["<pad>", "▁the", "ing", "▁Paris", "▁", "▁x"], {"the": 1, "Paris": 3}),
    # no marker at all (a word-level vocabulary): every entry as written
    (["<unk>", "the", "run", "a"], {"the": 1, "run": 2}),
])
def test_word_vocabulary_rule(tokens, expected):
    from textxai.classifier import word_vocabulary

    tok = FakeTokenizer(tokens, special=[t for t in tokens if t.startswith(("<", "["))])
    got = word_vocabulary(tok)
    assert got == expected
    assert list(got.values()) == sorted(got.values())  # token-id order
    assert word_vocabulary(tok, min_length=4) == {w: i for w, i in expected.items() if len(w) >= 4}
    with pytest.raises(ValueError, match="min_length=0"):
        word_vocabulary(tok, min_length=0)


def test_word_vocabulary_of_real_tokenizers(bert_clf, roberta_clf):
    import tiny_models

    expected = [t for t in tiny_models.BERT_VOCAB if t.isalpha() and len(t) >= 2]  # no "##" piece is alphabetic
    assert list(bert_clf.word_vocabulary()) == expected
    assert bert_clf.word_vocabulary()["movie"] == tiny_models.BERT_VOCAB.index("movie")
    vocab = roberta_clf.tokenizer.get_vocab()
    words = roberta_clf.word_vocabulary()
    assert words and all(vocab["\u0120" + w] == i for w, i in words.items())
    assert set(words) == {t[1:] for t in vocab if t.startswith("\u0120") and t[1:].isalpha() and t[1:].isascii() and len(t) > 2}


def test_word_vocabulary_keeps_only_ids_the_model_can_embed(tmp_path):
    import tiny_models

    tokenizer = tiny_models.bert_tokenizer(tmp_path)
    tokenizer.add_tokens(["zebra"])  # added to the tokenizer, the embedding matrix not resized
    clf = TextClassifier((tiny_models.tiny_bert(), tokenizer), device="cpu")
    assert "zebra" not in clf.word_vocabulary() and "movie" in clf.word_vocabulary()
    from textxai.classifier import word_vocabulary

    assert word_vocabulary(tokenizer)["zebra"] == len(tiny_models.BERT_VOCAB)


def test_fingerprint_follows_labels_and_size(bert_parts):
    import tiny_models

    model, tokenizer = bert_parts
    a = TextClassifier((model, tokenizer), device="cpu")
    assert a.fingerprint == TextClassifier((model, tokenizer), device="cpu").fingerprint and len(a.fingerprint) == 16
    other_labels = tiny_models.tiny_bert(num_labels=3)
    assert TextClassifier((other_labels, tokenizer), device="cpu").fingerprint != a.fingerprint
    renamed = tiny_models.tiny_bert()
    renamed.config.id2label = {0: "neg", 1: "pos"}
    assert TextClassifier((renamed, tokenizer), device="cpu").fingerprint != a.fingerprint
    bigger = tiny_models.tiny_bert()
    bigger.classifier = torch.nn.Linear(16, 2, bias=False)
    assert TextClassifier((bigger, tokenizer), device="cpu").fingerprint != a.fingerprint


# ----------------------------------------------------------- embedding forward: every model family
def test_encoder_decoder_forward_from_any_embeddings(bart_clf):
    import tiny_models

    enc = bart_clf.encode(TEXTS[:4], PAIRS[:4])
    embeds = bart_clf.input_embeddings(enc.tensors).detach()
    moved = embeds + 0.3 * torch.randn(embeds.shape, generator=torch.Generator().manual_seed(0))
    ids, mask = enc.tensors["input_ids"], enc.tensors["attention_mask"]
    with torch.no_grad():
        for e in (embeds, moved):
            np.testing.assert_allclose(bart_clf.logits_from_embeddings(e, enc.tensors).numpy(),
                                       tiny_models.bart_logits_reference(bart_clf.model, ids, e, mask).numpy(), atol=1e-5)


@pytest.mark.parametrize("name", ["bart", "gpt2"])
def test_gradient_attributions_on_encoder_decoder_and_decoder_only(request, name):
    """Batch-size independent, and integrated gradients add up to p(x) - p(every word masked) (completeness)."""
    from textxai.attribution import word_attributions

    clf = request.getfixturevalue(f"{name}_clf")
    texts = ["the movie was good", "a man is sleeping outside , i hated it", "fine"]
    for method in ("gradient", "input_x_gradient"):
        a, b = (word_attributions(texts, clf, method, batch_size=bs) for bs in (1, 3))
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, atol=1e-5)
    double = TextClassifier((type(clf.model)(clf.model.config).double().eval(), clf.tokenizer), device="cpu")
    double.model.load_state_dict({k: v.double() for k, v in clf.model.state_dict().items()})
    probs = double.predict_proba(texts[::2])
    target = probs.argmax(1)
    ig = word_attributions(texts[::2], double, "integrated_gradients", n_steps=200)
    for i, text in enumerate(texts[::2]):
        masked = double.masked_proba(text, np.ones((1, len(double.words(text))), bool))[0]
        assert ig[i].sum() == pytest.approx(probs[i, target[i]] - masked[target[i]], abs=2e-3)


def test_model_that_cannot_be_fed_embeddings_names_its_class(bert_parts):
    from transformers import BertForSequenceClassification

    class SpareTableBert(BertForSequenceClassification):
        """get_input_embeddings returns a table the forward never uses."""

        def get_input_embeddings(self):
            return self.spare

    model = SpareTableBert(bert_parts[0].config).eval()
    model.spare = torch.nn.Embedding(model.config.vocab_size, model.config.hidden_size)
    clf = TextClassifier((model, bert_parts[1]), device="cpu")
    enc = clf.encode(["good film"])
    with pytest.raises(TypeError, match="model class SpareTableBert never calls its input embedding layer"):
        clf.logits_from_embeddings(clf.input_embeddings(enc.tensors), enc.tensors)
    with pytest.raises(ValueError, match="'input_ids' included"):
        clf.logits_from_embeddings(clf.input_embeddings(enc.tensors), {"attention_mask": enc.tensors["attention_mask"]})



def test_cpu_batches_hold_at_most_cpu_batch_tokens_and_give_the_same_probabilities(bert_clf, monkeypatch):
    """On a CPU a batch holds at most CPU_BATCH_TOKENS padded tokens (one longer row alone), whatever batch_size
    asks (the tiny model takes 64 tokens: the cap is lowered to 200 to split its rows the same way)."""
    shapes = []
    hook = bert_clf.model.register_forward_hook(
        lambda m, args, kwargs, out: shapes.append(tuple(kwargs["input_ids"].shape)), with_kwargs=True)
    monkeypatch.setattr("textxai.model.probabilities.CPU_BATCH_TOKENS", 200)
    try:
        text = " ".join(["a terrible boring film , i hated it"] * 6)   # 62 tokens
        masks = np.eye(len(bert_clf.words(text)), dtype=bool)
        capped = bert_clf.masked_proba(text, masks, batch_size=32)
        assert max(r for r, _ in shapes) == 3, shapes  # 3 x 62 <= 200 < 4 x 62
        assert all(r * n <= 200 for r, n in shapes) and sum(r for r, _ in shapes) == len(masks)
        np.testing.assert_allclose(capped, bert_clf.masked_proba(text, masks, batch_size=1), atol=1e-6)
        texts = [" ".join(["good"] * k) for k in (3, 5, 8, 20, 40, 60)] * 3
        shapes.clear()
        mixed = bert_clf.predict_proba(texts, batch_size=64)
        assert all(r == 1 or r * n <= 200 for r, n in shapes) and max(r for r, _ in shapes) > 1, shapes
        np.testing.assert_allclose(mixed, bert_clf.predict_proba(texts, batch_size=1), atol=1e-6)
    finally:
        hook.remove()


def test_a_tokenizer_with_nothing_to_pad_with_is_named_at_construction(bert_parts):
    """No pad, eos or unk token: every batch ended in numpy's "int() argument must be ... not 'NoneType'"."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from textxai.classifier import TextClassifier

    inner = Tokenizer(models.WordLevel({"the": 0, "movie": 1, "was": 2, "good": 3}, unk_token=None))
    inner.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=inner)
    with pytest.raises(ValueError, match=r"tokenizer=\w+ has no pad token, and no eos or unk.*tokenizer.pad_token"):
        TextClassifier((bert_parts[0], tokenizer), device="cpu")
    tokenizer.pad_token = "the"  # what the message asks for: then it works
    assert TextClassifier((bert_parts[0], tokenizer), device="cpu").predict_proba(["the movie was good"]).shape == (1, 2)


def test_class_index_reads_whole_numbers_written_as_floats(bert_clf):
    # a CSV / JSONL label "1.0" (pandas writes an integer column with a gap as floats) is the class index, in every
    # caller of class_index (the audit had its own special case for it)
    assert [bert_clf.class_index(v) for v in ("1.0", " 0.0 ", 1.0, np.float32(0.0), "1")] == [1, 0, 1, 0, 1]
    for bad in ("1.5", 0.5, "nan", float("inf"), "2.0"):
        with pytest.raises(ValueError, match="expected a class index 0..1"):
            bert_clf.class_index(bad)
