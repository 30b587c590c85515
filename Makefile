# Two commands on a fresh machine: `make demo` (a real load test against the bundled reference server on
# loopback) and `make test` (lint, types and the whole test suite). Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: demo test install mutate

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

# Mutation testing (mutmut 3; slow, so not part of `make test` or CI), one module at a time in its own copy
# of the tree under build/mutate/ (bench/mutate.py lists the modules and their tests). Some modules only:
# make mutate MODULE='loadgen/http/sse.py metrics/gate'. Scores and survivors: docs/testing.md.
MUTATE_CHILDREN ?= 2
mutate: install
	nice -n 10 $(PY) -m bench.mutate --max-children $(MUTATE_CHILDREN) $(MODULE)
