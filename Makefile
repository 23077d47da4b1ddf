# The README's two commands: `make demo` (default benchmark) and `make test`. Each installs what it needs.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt
CORE := $(VENV)/.installed-core
FULL := $(VENV)/.installed-full

.PHONY: install demo test test-slow lint bench

$(CORE): pyproject.toml constraints.txt
	python3 -m venv $(VENV)
	$(PIP) -e ".[dev]"
	touch $(CORE)

# Model backends for the tests: torch is pinned to the CPU build on the machine (constraints.txt).
$(FULL): $(CORE)
	$(PIP) -e ".[dev,hf,openai]"
	touch $(FULL)

install: $(FULL)

demo: $(CORE)
	$(VENV)/bin/tutorzoo eval --suite default --out runs/default

test: $(FULL)
	$(PY) -m pytest

test-slow: $(FULL)
	$(PY) -m pytest -m slow

lint: $(CORE)
	$(VENV)/bin/ruff check .

bench: $(FULL)
	$(PIP) -e ".[bench]"
	$(PY) benchmarks/env_speed.py
	$(PY) benchmarks/rollout_speed.py
