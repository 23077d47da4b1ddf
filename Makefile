# The README's two commands: `make demo` (default benchmark) and `make test`. Each installs what it needs.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt
CORE := $(VENV)/.installed-core
FULL := $(VENV)/.installed-full

.PHONY: install browser demo test test-slow lint bench

$(CORE): pyproject.toml constraints.txt
	python3 -m venv $(VENV)
	$(PIP) -e ".[dev,report]"
	touch $(CORE)

# Everything for the tests: model backends, TRL/PEFT/SB3, W&B, Ray (torch pinned to the machine's CPU build in
# constraints.txt), and Debian's chromium for the report's browser test.
$(FULL): $(CORE)
	$(PIP) -e ".[dev,all]"
	touch $(FULL)

browser:
	@command -v chromium >/dev/null 2>&1 || { SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

install: $(FULL) browser

demo: $(CORE)
	$(VENV)/bin/tutorzoo eval --suite default --out runs/default --overwrite

test: $(FULL) browser
	$(PY) -m pytest

test-slow: $(FULL) browser
	$(PY) -m pytest -m slow

lint: $(CORE)
	$(VENV)/bin/ruff check .

bench: $(FULL)
	$(PIP) -e ".[bench]"
	$(PY) benchmarks/env_speed.py
	$(PY) benchmarks/rollout_speed.py

# Mutation testing of the critical modules (.ci/mutation.py): kill rate per module and every survivor.
# Not part of `make test`. One module or a few: `make mutation MODULES="envs/tutoring.py agents/student/model.py"`.
MODULES ?=
.PHONY: mutation
mutation: $(FULL)
	$(PY) .ci/mutation.py $(foreach m,$(MODULES),--module $(m))

# verifiers 0.4 (integrations/verifiers/) needs openai<3 and our pins hold openai 3.x: it gets its own venv, with
# TutorZoo's core (no model backends) and the tutorzoo-verifiers distribution, both editable, then the chat
# harness's uv script environment (the one step that needs the network besides pip). tests/integrations/
# test_verifiers.py runs vf-eval from it offline and skips, saying why, while it is absent.
VF_VENV ?= integrations/verifiers/.venv
VF_READY := $(VF_VENV)/.installed

.PHONY: verifiers-venv
$(VF_READY): pyproject.toml integrations/verifiers/pyproject.toml
	python3 -m venv $(VF_VENV)
	$(VF_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -e . -e integrations/verifiers
	PATH="$(abspath $(VF_VENV))/bin:$$PATH" $(VF_VENV)/bin/python -m tutorzoo_verifiers.warm
	touch $(VF_READY)

verifiers-venv: $(VF_READY)
