"""textxai.spaces: model choice rules, caps, escaping, layout and queue of the shared Space shell."""
from __future__ import annotations

import json
import os
from html.parser import HTMLParser

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

gr = pytest.importorskip("gradio")

from textxai import classifier, spaces  # noqa: E402
from textxai.spaces import SpaceError, check_inputs, highlight_words, resolve_model  # noqa: E402


class FakeHub:
    """Stands in for huggingface_hub.HfApi: ``info`` is returned by model_info, or raised when an exception."""

    info = None
    asked: list = []

    def model_info(self, repo_id, **kwargs):
        FakeHub.asked.append(repo_id)
        if isinstance(FakeHub.info, BaseException):
            raise FakeHub.info
        return FakeHub.info


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch):
    """No SPACE_ID, an empty model cache, and a Hub that is offline (never the network) unless a test says so."""
    import huggingface_hub
    from huggingface_hub.errors import OfflineModeIsEnabled

    monkeypatch.delenv("SPACE_ID", raising=False)
    FakeHub.info, FakeHub.asked = OfflineModeIsEnabled("offline"), []
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeHub)
    spaces.clear_cache()
    yield
    spaces.clear_cache()


class Spy:
    """Stands in for TextClassifier: records every construction."""

    calls: list = []

    def __init__(self, model, **kwargs):
        Spy.calls.append((model, kwargs))
        self.model_name = model


@pytest.fixture
def spy(monkeypatch):
    Spy.calls = []
    monkeypatch.setattr(classifier, "TextClassifier", Spy)  # what the library's resolver builds
    return Spy


@pytest.fixture(scope="module")
def saved_bert(bert_parts, tmp_path_factory):
    """The tiny BERT saved with save_pretrained (safetensors), with its tokenizer."""
    model, tokenizer = bert_parts
    folder = tmp_path_factory.mktemp("saved_bert")
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    assert (folder / "model.safetensors").is_file()
    return folder


# ----------------------------------------------------------------------------- ids and hosting
@pytest.mark.parametrize("value, ok", [
    ("textattack/bert-base-uncased-imdb", True), ("a/b", True), ("Org.X/model_v1.2", True),
    ("bert-base-uncased", False), ("../etc", False), ("/etc/passwd", False), ("~/models/x", False),
    ("a/b/c", False), ("a/../b", False), ("a--b/c", False), ("a/b.git", False), ("a /b", False),
    ("./a", False), ("a/", False), ("/a", False), ("a/b\n", False), ("x" * 97 + "/b", False),
])
def test_is_hub_id(value, ok):
    assert spaces.is_hub_id(value) is ok


def test_is_hosted_follows_space_id(monkeypatch):
    assert not spaces.is_hosted()
    monkeypatch.setenv("SPACE_ID", "textxai/naopc")
    assert spaces.is_hosted()


# ----------------------------------------------------------------------------- model resolution
def test_hosted_refuses_local_paths(spy, saved_bert, tmp_path, monkeypatch):
    for choice in (str(saved_bert), "./model", "../model", "~/model", "/etc/passwd", "bert-base-uncased"):
        with pytest.raises(SpaceError, match="local paths are refused") as info:
            resolve_model(choice, hosted=True)
        assert isinstance(info.value, ValueError) and repr(choice)[1:-1] in str(info.value)
    # a Hub-looking id that names a folder next to the app is a local path too
    (tmp_path / "owner" / "name").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SpaceError, match="local paths are refused"):
        resolve_model("owner/name", hosted=True)
    # hosted=None reads SPACE_ID
    monkeypatch.setenv("SPACE_ID", "textxai/naopc")
    with pytest.raises(SpaceError, match="local paths are refused"):
        resolve_model(str(saved_bert))
    assert spy.calls == []


def test_local_folder_allowed_when_not_hosted(saved_bert, bert_parts):
    clf = resolve_model(str(saved_bert), hosted=False)
    texts = ["the movie was wonderful", "a terrible film"]
    model, tokenizer = bert_parts
    batch = tokenizer(texts, padding=True, return_tensors="pt")
    with torch.inference_mode():
        expected = torch.softmax(model(**batch).logits.double(), -1).numpy()
    np.testing.assert_allclose(clf.predict_proba(texts), expected, atol=1e-6)
    assert resolve_model(str(saved_bert) + os.sep, hosted=False) is clf  # cached by real path


def test_choices_always_load_safely_and_are_cached(spy):
    for choice in ("textxai/demo-sentiment", "textxai/demo-topic", "someone/some-model"):
        first = resolve_model(choice, hosted=True)
        assert resolve_model(f"  {choice} ", hosted=True) is first
    assert [c[0] for c in spy.calls] == ["textxai/demo-sentiment", "textxai/demo-topic", "someone/some-model"]
    for _, kwargs in spy.calls:
        assert kwargs["trust_remote_code"] is False
        assert kwargs["use_safetensors"] is True


@pytest.mark.parametrize("choice", [None, "", "   ", 3, "not a model id"])
def test_bad_choice_messages(choice, spy):
    with pytest.raises(SpaceError, match="model="):
        resolve_model(choice, hosted=False)
    assert spy.calls == []


def test_remote_code_is_never_run(saved_bert, tmp_path):
    """A folder whose config points to custom code: loading must use the built-in class, never import it."""
    folder = tmp_path / "remote_code_model"
    folder.mkdir()
    for item in saved_bert.iterdir():
        (folder / item.name).write_bytes(item.read_bytes())
    sentinel = tmp_path / "code_was_run"
    (folder / "evil.py").write_text(
        f"open({str(sentinel)!r}, 'w').write('ran')\n"
        "from transformers import BertForSequenceClassification, BertConfig\n"
        "class EvilConfig(BertConfig):\n    pass\n"
        "class EvilModel(BertForSequenceClassification):\n    pass\n"
        "from transformers import BertTokenizerFast\n"
        "class EvilTokenizer(BertTokenizerFast):\n    pass\n"
    )
    config = json.loads((folder / "config.json").read_text())
    config["auto_map"] = {"AutoConfig": "evil.EvilConfig", "AutoModelForSequenceClassification": "evil.EvilModel"}
    (folder / "config.json").write_text(json.dumps(config))
    tokenizer_config = json.loads((folder / "tokenizer_config.json").read_text())
    tokenizer_config["auto_map"] = {"AutoTokenizer": ["evil.EvilTokenizer", "evil.EvilTokenizer"]}
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config))
    try:
        clf = resolve_model(str(folder), hosted=False)
    except SpaceError:
        clf = None  # refusing is fine too; running the code is not
    assert not sentinel.exists()
    if clf is not None:
        assert type(clf.model).__name__ == "BertForSequenceClassification"
        assert type(clf.tokenizer).__name__ != "EvilTokenizer"


def test_pickled_weights_refused(bert_parts, tmp_path):
    model, tokenizer = bert_parts
    folder = tmp_path / "pickled"
    folder.mkdir()
    model.config.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    torch.save(model.state_dict(), folder / "pytorch_model.bin")
    with pytest.raises(SpaceError, match="safetensors"):
        resolve_model(str(folder), hosted=False)


def test_unreachable_hub_id_gives_offline_message(monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    choice = "someone-textxai-test/no-such-model-xyz"
    with pytest.raises(SpaceError) as info:
        resolve_model(choice, hosted=True)
    message = str(info.value)
    assert message.startswith(f"could not reach the Hub for {choice!r} — this Space may be offline")
    assert "the demo models always work" in message and "textxai/demo-sentiment" in message
    assert info.value.title == "Hub unreachable"
    assert (choice, "safe", None) not in classifier._NAMED  # a failure is not cached: retried once the Hub is back


def test_load_failures_are_classified(monkeypatch):
    from huggingface_hub.errors import RepositoryNotFoundError

    def fail_with(error):
        class Failing:  # a class: the resolver tells a TextClassifier from a name by isinstance
            def __init__(self, model, **kwargs):
                try:
                    raise error
                except Exception as inner:
                    raise ValueError(f"model={model!r} could not be loaded") from inner
        return Failing

    monkeypatch.setattr(classifier, "TextClassifier", fail_with(ConnectionError("Name or service not known")))
    with pytest.raises(SpaceError, match="could not reach the Hub for 'a/b'"):
        resolve_model("a/b", hosted=True)
    monkeypatch.setattr(classifier, "TextClassifier", fail_with(TimeoutError("read timed out")))
    with pytest.raises(SpaceError, match="could not reach the Hub"):
        resolve_model("a/b", hosted=True)
    not_found = RepositoryNotFoundError.__new__(RepositoryNotFoundError)  # its __init__ needs an HTTP response
    Exception.__init__(not_found, "404 Client Error: Repository Not Found for url: .../a/b")
    monkeypatch.setattr(classifier, "TextClassifier", fail_with(not_found))
    with pytest.raises(SpaceError, match="no such model on the Hub"):
        resolve_model("a/b", hosted=True)
    monkeypatch.setattr(classifier, "TextClassifier", fail_with(KeyError("weird")))
    with pytest.raises(SpaceError, match="could not be loaded") as info:
        resolve_model("a/b", hosted=True)
    assert "could not reach" not in str(info.value)


def test_hosted_space_checks_hub_metadata_before_downloading(spy):
    from types import SimpleNamespace

    FakeHub.info = SimpleNamespace(safetensors=SimpleNamespace(total=spaces.MAX_PARAMETERS + 1))
    with pytest.raises(SpaceError, match=f"has {spaces.MAX_PARAMETERS + 1:,} parameters; this Space loads models of at most"):
        resolve_model("big/model", hosted=True)
    FakeHub.info = SimpleNamespace(safetensors=None)
    with pytest.raises(SpaceError, match="has no safetensors weights on the Hub"):
        resolve_model("pickled/model", hosted=True)
    assert spy.calls == []  # refused before any download
    FakeHub.info = SimpleNamespace(safetensors=SimpleNamespace(total=spaces.MAX_PARAMETERS))
    resolve_model("small/model", hosted=True)
    assert [c[0] for c in spy.calls] == ["small/model"]
    resolve_model("textxai/demo-topic", hosted=True)  # demo models: no Hub question
    resolve_model("other/model", hosted=False)  # on your own machine: no size limit
    assert FakeHub.asked == ["big/model", "pickled/model", "small/model"]
    from huggingface_hub.errors import RepositoryNotFoundError

    missing = RepositoryNotFoundError.__new__(RepositoryNotFoundError)
    Exception.__init__(missing, "404 Repository Not Found")
    FakeHub.info = missing
    with pytest.raises(SpaceError, match="model='gone/model': no such model on the Hub"):
        resolve_model("gone/model", hosted=True)
    assert [c[0] for c in spy.calls] == ["small/model", "textxai/demo-topic", "other/model"]


def test_error_messages_are_escaped_for_the_modal(spy):
    choice = '<img src=x onerror="alert(1)">'
    with pytest.raises(SpaceError) as info:
        resolve_model(choice, hosted=True)
    assert "<img" in str(info.value)  # plain for Python callers
    assert "<img" not in info.value.message and "&lt;img" in info.value.message  # escaped for Gradio


def test_demo_model_always_works_offline(monkeypatch):
    demo = pytest.importorskip("textxai.demo")
    if not hasattr(demo, "model_path"):
        pytest.skip("textxai.demo (the embedded demo models) is not written yet")
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    clf = resolve_model("textxai/demo-sentiment", hosted=True)
    assert clf.num_labels == 2
    probs = clf.predict_proba(["a wonderful, moving film", "a dull and boring mess"])
    assert probs[0].argmax() != probs[1].argmax()


def test_model_dropdown():
    with gr.Blocks():
        dropdown = spaces.model_dropdown()
    assert dropdown.allow_custom_value is True
    assert [c[1] for c in dropdown.choices] == ["textxai/demo-sentiment", "textxai/demo-topic"]
    assert dropdown.value == "textxai/demo-sentiment"
    with gr.Blocks():
        topic = spaces.model_dropdown(value="textxai/demo-topic", choices=["textxai/demo-topic"])
    assert topic.value == "textxai/demo-topic"


# ----------------------------------------------------------------------------- caps
def test_check_inputs_caps():
    assert check_inputs(["x" * 10] * 3, max_texts=3, max_chars=10) == ["x" * 10] * 3
    assert check_inputs("one text") == ["one text"]
    with pytest.raises(SpaceError, match="4 texts given; this Space accepts at most 3"):
        check_inputs(["a"] * 4, max_texts=3)
    with pytest.raises(SpaceError, match=r"texts\[1\] has 11 characters; this Space accepts at most 10"):
        check_inputs(["ok", "x" * 11], max_chars=10)
    with pytest.raises(SpaceError, match="no text given"):
        check_inputs([])
    with pytest.raises(SpaceError, match="no text given"):
        check_inputs(["", "  \n"])
    with pytest.raises(SpaceError, match=r"texts\[1\]=None \(NoneType\): expected a string"):
        check_inputs(["a", None])
    with pytest.raises(SpaceError, match="expected a list of texts"):
        check_inputs(None)
    with pytest.raises(SpaceError, match=r"premises\[0\] has 2,001 characters"):
        check_inputs(["x" * 2001], name="premises")


def test_default_caps():
    check_inputs(["x" * spaces.MAX_CHARS] * spaces.MAX_TEXTS)
    with pytest.raises(SpaceError):
        check_inputs(["x"] * (spaces.MAX_TEXTS + 1))
    with pytest.raises(SpaceError):
        check_inputs(["x" * (spaces.MAX_CHARS + 1)])


def test_split_lines():
    assert spaces.split_lines(" a film \n\n  \nanother one\r\nthird") == ["a film", "another one", "third"]
    assert spaces.split_lines(None) == [] and spaces.split_lines("") == []


def test_user_errors_wrapper():
    @spaces.user_errors
    def handler(x):
        if x == "bad":
            raise ValueError("x='<bad>': expected good")
        return x.upper()

    assert handler("ok") == "OK"
    with pytest.raises(SpaceError) as info:
        handler("bad")
    assert str(info.value) == "x='<bad>': expected good" and "&lt;bad&gt;" in info.value.message


# ----------------------------------------------------------------------------- escaping
class _Collect(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.words, self.styles = [], [], []
        self._in_word = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        if attrs.get("class") == "textxai-word":
            self._in_word = True
            self.words.append("")
            self.styles.append(attrs["style"])

    def handle_endtag(self, tag):
        self._in_word = False

    def handle_data(self, data):
        if self._in_word:
            self.words[-1] += data


def _parse(html_text):
    parser = _Collect()
    parser.feed(html_text)
    parser.close()
    return parser


def test_highlight_words_escapes_script():
    words = ["<script>alert('x')</script>", '"><img src=x onerror=alert(1)>', "fine", "&amp;"]
    out = highlight_words(words, [1.0, -1.0, 0.0, 0.5], label="<b>label</b>")
    assert "<script" not in out and "<img" not in out and "<b>label" not in out
    assert "&lt;script&gt;" in out and "&amp;amp;" in out
    parsed = _parse(out)
    assert set(parsed.tags) <= {"div", "span", "b"}
    assert parsed.words == words


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=8), st.data())
def test_highlight_words_roundtrip(words, data):
    scores = data.draw(st.lists(st.floats(-5, 5), min_size=len(words), max_size=len(words)))
    parsed = _parse(highlight_words(words, scores))
    assert set(parsed.tags) <= {"div", "span"}
    assert parsed.words == words  # every word shown literally, nothing interpreted as markup


def test_highlight_colors():
    out = highlight_words(["up", "down", "zero", "half", "nan"], [2.0, -2.0, 0.0, 1.0, float("nan")])
    styles = _parse(out).styles
    assert "rgba(220, 38, 38, 0.800)" in styles[0]  # strongest positive: red, full alpha
    assert "rgba(37, 99, 235, 0.800)" in styles[1]  # strongest negative: blue
    assert "0.000)" in styles[2]
    assert "rgba(220, 38, 38, 0.400)" in styles[3]
    assert "transparent" in styles[4]
    capped = _parse(highlight_words(["a"], [1.0], max_abs=4.0)).styles[0]
    assert "0.200)" in capped
    with pytest.raises(ValueError, match="scores has 1 items but words has 2"):
        highlight_words(["a", "b"], [1.0])


def test_escape():
    assert spaces.escape("<a href='x'>&</a>") == "&lt;a href=&#x27;x&#x27;&gt;&amp;&lt;/a&gt;"
    assert spaces.escape(3) == "3"


# ----------------------------------------------------------------------------- layout and queue
def test_space_shell_header_footer_queue():
    with spaces.space("NAOPC", module="naopc", paper_url="https://arxiv.org/abs/0000.00000",
                      paper_title="A paper", description="What it does.", max_size=7, concurrency_limit=2) as demo:
        gr.Textbox(label="inside")
    markdown = [b.value for b in demo.blocks.values() if isinstance(b, gr.Markdown)]
    assert markdown[0].startswith("# NAOPC") and "[A paper](https://arxiv.org/abs/0000.00000)" in markdown[0]
    assert "https://huggingface.co/spaces/textxai/naopc" in markdown[0]
    assert "textxai.load(\"naopc\")" in markdown[0]
    assert "safetensors" in markdown[-1] and f"{spaces.MAX_TEXTS} texts" in markdown[-1]
    assert demo.title == "NAOPC"
    assert demo._queue.max_size == 7 and demo._queue.default_concurrency_limit == 2
    plain = spaces.queue(gr.Blocks())
    assert plain._queue.max_size == spaces.QUEUE_MAX_SIZE
    assert plain._queue.default_concurrency_limit == spaces.CONCURRENCY_LIMIT


# ----------------------------------------------------------------------------- in the browser
@pytest.mark.browser
def test_highlight_and_errors_render_inert_in_browser(page, gradio_url):
    evil = '<img src=x onerror="window.pwned=1">'

    @spaces.user_errors
    def run(text):
        texts = check_inputs(spaces.split_lines(text), max_texts=2)
        if texts[0] == "fail":
            raise ValueError(f"text={evil}: expected something else")
        return highlight_words(texts, list(range(len(texts))))

    with spaces.space("Harness", module="naopc", paper_url="https://example.org") as demo:
        box = gr.Textbox(label="texts", elem_id="texts")
        button = gr.Button("Run", elem_id="run")
        out = gr.HTML(elem_id="out")
        button.click(run, box, out)
    page.goto(gradio_url(demo))
    page.locator("#texts textarea").fill(evil + "\nsecond")
    page.locator("#run").click()
    page.locator("#out .textxai-word").first.wait_for()
    assert page.locator("#out .textxai-word").all_inner_texts() == [evil, "second"]
    assert page.locator("#out img").count() == 0
    page.locator("#texts textarea").fill("fail")
    page.locator("#run").click()
    page.get_by_text("expected something else").first.wait_for()
    assert page.evaluate("window.pwned") is None
    page.locator("#texts textarea").fill("a\nb\nc")
    page.locator("#run").click()
    page.get_by_text("3 texts given; this Space accepts at most 2").first.wait_for()


@pytest.mark.parametrize("before, after", [
    ("a good film", "a  good film ."),  # an extra space (a spaCy white-space token) and a new word
    ("the   cast <b>was</b> great", "the cast was great"),  # white space and markup removed
    ("same", "same"),
])
def test_diff_html_counts_whitespace_words_as_ceval_does(before, after):
    """CEval's Space: edits over spaCy tokens with white space kept, each edited one visible (␣), all escaped."""
    import html
    import re

    from textxai.words import word_distance

    out = spaces.diff_html(before, after, keep_whitespace=True)
    assert "<b>" not in out
    marks = re.findall(r"<(ins|del)[^>]*>([^<]*)</\1>", out)
    inserted = sum(1 for tag, _ in marks if tag == "ins")
    deleted = sum(len(re.findall(r"␣|\S+", text.replace(" ␣", "␣"))) for tag, text in marks if tag == "del")
    d = word_distance(before, after, keep_whitespace=True)
    assert max(inserted, deleted) <= d <= inserted + deleted
    shown = html.unescape(re.sub(r"<[^>]+>", "", re.sub(r"<del[^>]*>[^<]*</del> ?", "", out)))
    assert shown.replace("␣", " ") == after


def test_hosted_mode_is_an_option_of_the_library_resolvers(spy):
    """The rules a Space applies are the library's (as_classifier / as_lm with safe=SafeLoad): no private access."""
    from types import SimpleNamespace

    from textxai import lm
    from textxai.loading import SAFE_LOAD_KWARGS, ModelRefused, SafeLoad

    FakeHub.info = SimpleNamespace(safetensors=SimpleNamespace(total=11))
    with pytest.raises(ModelRefused, match=r"model='big/model' has 11 parameters; this app loads models of at most 10 "):
        classifier.as_classifier("big/model", safe=SafeLoad(max_parameters=10, who="this app"))
    with pytest.raises(ModelRefused, match=r"lm='big/lm' has 11 parameters; this app loads models of at most 10 "):
        lm.as_lm("big/lm", safe=SafeLoad(max_parameters=10, who="this app"))
    assert spy.calls == [] and FakeHub.asked == ["big/model", "big/lm"]
    first = classifier.as_classifier(" ok/model ", safe=SafeLoad(max_parameters=11))
    assert classifier.as_classifier("ok/model", safe=SafeLoad()) is first  # one hosted entry per name
    assert spy.calls == [("ok/model", {"device": None, **SAFE_LOAD_KWARGS})]
    with pytest.raises(TypeError, match="safe=3"):
        classifier.as_classifier("ok/other", safe=3)


def test_a_bad_field_is_named_as_the_visitor_sees_it():
    """The CEval Space's original with a lone surrogate was refused by the library as `references[0]=...`: a name
    the visitor never saw. The Space's own check names its field (one-text fields without an index)."""
    from helpers import load_space_app

    from textxai.spaces import SpaceError, check_inputs

    app = load_space_app("ceval")
    with pytest.raises(SpaceError, match=r"^original='a \\ud800 film' holds '\\ud800' at character 2, a lone surrogate"):
        app.score_one("textxai/demo-sentiment", "a \ud800 film", "a good film", "none")
    with pytest.raises(SpaceError, match=r"^counterfactuals\[1\]='a \\udc00' holds"):
        app.score_one("textxai/demo-sentiment", "a dull film", "a good film\na \udc00", "none")
    with pytest.raises(SpaceError, match=r"^text has 3,000 characters"):
        check_inputs(["x" * 3000], max_texts=1, max_chars=2000, name="text")


SPACES = ["naopc", "fim_difficulty", "toki_trust", "ceval", "inconsistency", "audit"]


@pytest.mark.parametrize("name", SPACES)
def test_every_endpoint_also_answers_the_modules_json(name):
    """The endpoints returned HTML and plots only: a gradio_client user had no numbers. Every button's endpoint
    now ends with a JSON output (the module's result); the slider's live preview, the attack and gr.Examples' loader stay."""
    from helpers import load_space_app

    demo = load_space_app(name).demo
    functions = demo.fns.values() if isinstance(demo.fns, dict) else demo.fns
    endpoints = {f.name: [type(o).__name__ for o in f.outputs] for f in functions}
    answered = {n for n, outputs in endpoints.items() if outputs and outputs[-1] == "JSON"}
    assert answered and set(endpoints) - answered <= {"push", "attack_text", "load_example"}, endpoints


def test_the_json_is_the_modules_own_result():
    from helpers import load_space_app

    from textxai import inconsistency

    app = load_space_app("inconsistency")
    chains = [["a b", "a c", "a c d e"], ["x y", "x z", "x"]]
    out = spaces.user_errors(spaces.with_result(app.score_chains))("\n\n".join("\n".join(c) for c in chains), "1",
                                                                   "whitespace", "pooled")
    assert len(out) == 4 and out[:3][0] == app.score_chains("\n\n".join("\n".join(c) for c in chains), "1",
                                                            "whitespace", "pooled")[0]
    expected = inconsistency.analyse(chains, n=[1], word_tokenizer="whitespace", pooling="pooled").summary
    assert out[-1] == json.loads(json.dumps(expected))
    assert spaces.with_result(lambda: "html")() == ("html", None)  # nothing recorded: None, not a stale result
