# textxai: `make demo` installs everything and runs the main job; `make test` runs the tests (offline).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
OFFLINE := HF_HUB_OFFLINE=1 HF_EVALUATE_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 GRADIO_ANALYTICS_ENABLED=False
PYTEST_ARGS ?=

.PHONY: demo test bench wheel clean

$(VENV)/.installed: pyproject.toml setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0          # the CPU build on disk; first, so nothing pulls a CUDA build
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

.venv: $(VENV)/.installed

demo: $(VENV)/.installed
	$(OFFLINE) $(BIN)/textxai demo --output demo-output

test: $(VENV)/.installed
	export HF_HOME=$$(mktemp -d) && $(OFFLINE) $(BIN)/python -m pytest $(PYTEST_ARGS); status=$$?; rm -rf $$HF_HOME; exit $$status

BENCH_ARGS ?=
bench: $(VENV)/.installed   # one table against the real peers (bench/report.py); BENCH_ARGS=--quick for a smoke run
	$(OFFLINE) $(BIN)/python bench/report.py $(BENCH_ARGS)

wheel: $(VENV)/.installed
	$(BIN)/python -m build --wheel --outdir dist .

clean:
	rm -rf $(VENV) build dist demo-output src/*.egg-info
