# Two commands on a fresh machine: `make demo` (a real load test against the bundled reference server on
# loopback) and `make test` (lint, types and the whole test suite). Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: demo test test-shuffled install mutate

install: $(VENV)/.installed

# torch==2.13.0 first and pinned: a plain `torch` requirement would pull a multi-GB CUDA build.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[server,dev]'
	touch $@

demo: install
	$(VENV)/bin/goodput run --requests 60 --rate 4 --prompt-tokens uniform:64:512 --output-tokens 64 \
		--slo ttft=500ms --slo tpot=50ms --output runs/demo --overwrite

test: install
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(PY) -m pytest -q -rs

# The same suite in a shuffled order (pytest-randomly), to catch tests that depend on the ones before them.
# pytest-randomly activates itself wherever it is installed, so it lives outside the venv's site-packages,
# in a throwaway folder put on PYTHONPATH for this target only. Repeat an order: make test-shuffled SEED=N.
RANDOMLY_DIR := $(VENV)/randomly
$(RANDOMLY_DIR)/pytest_randomly: $(VENV)/.installed
	$(PY) -m pip install -q --no-deps --target $(RANDOMLY_DIR) pytest-randomly
	touch $@

test-shuffled: install $(RANDOMLY_DIR)/pytest_randomly
	PYTHONPATH=$(RANDOMLY_DIR) $(PY) -m pytest -q -rs -p randomly $(if $(SEED),--randomly-seed=$(SEED))

# Mutation testing (mutmut 3; slow, so not part of `make test` or CI), one module at a time in its own copy
# of the tree under build/mutate/ (bench/mutate.py lists the modules and their tests). Some modules only:
# make mutate MODULE='loadgen/http/sse.py metrics/gate'. Scores and survivors: docs/testing.md.
MUTATE_CHILDREN ?= 2
mutate: install
	nice -n 10 $(PY) -m bench.mutate --max-children $(MUTATE_CHILDREN) $(MODULE)
