# The README's two commands: `make demo` (default benchmark) and `make test`. Each installs what it needs.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install demo test test-slow lint bench

$(STAMP): pyproject.toml constraints.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(VENV)/bin/tutorzoo eval --suite default --out runs/default

test: install
	$(PY) -m pytest

test-slow: install
	$(PY) -m pytest -m slow

lint: install
	$(VENV)/bin/ruff check .

bench: install
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[bench]"
	$(PY) benchmarks/env_speed.py
