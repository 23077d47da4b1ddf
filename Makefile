# The README's two commands: `make demo` (default benchmark) and `make test`. Each installs what it needs.
VENV ?= .venv
PY := $(VENV)/bin/python
# constraints.txt as this venv needs it: a torch already installed here that meets pyproject.toml's range (a CUDA
# build, say) is kept instead of being replaced by the pinned CPU build (tools/install_constraints.py).
PIN := $(PY) tools/install_constraints.py constraints.txt pyproject.toml > $(VENV)/constraints.txt
PIP := $(PY) -m pip install --quiet --disable-pip-version-check -c $(VENV)/constraints.txt
CORE := $(VENV)/.installed-core
FULL := $(VENV)/.installed-full

.PHONY: install browser demo test test-slow lint typecheck bench

$(CORE): pyproject.toml constraints.txt
	python3 -m venv $(VENV)
	$(PIN)
	$(PIP) -e ".[dev,report]"
	touch $(CORE)

# Everything for the tests: model backends, TRL/PEFT/SB3, W&B, Ray (torch pinned to the CPU build of
# constraints.txt unless the venv already has a torch in the package's range), and Debian's chromium for the
# report's browser test.
$(FULL): $(CORE)
	$(PIN)
	$(PIP) -e ".[dev,all]"
	touch $(FULL)

browser:
	@command -v chromium >/dev/null 2>&1 || { SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

install: $(FULL) browser

# The demo always starts over in DEMO_OUT (--overwrite), and says so first; DEMO_OUT=runs/other keeps a run.
# DEMO_ARGS adds eval options (tests/test_readme.py: DEMO_ARGS="--limit 3"); TESTS picks test files for make test.
DEMO_OUT ?= runs/default
DEMO_ARGS ?=
TESTS ?=
demo: $(CORE)
	@if [ -f "$(DEMO_OUT)/episodes.jsonl" ]; then \
		echo "make demo: replacing $(DEMO_OUT) ($$(wc -l < "$(DEMO_OUT)/episodes.jsonl") episodes of an earlier run are deleted; keep them with make demo DEMO_OUT=runs/other)"; \
	else echo "make demo: writing $(DEMO_OUT) (a later make demo replaces it; DEMO_OUT=runs/other writes elsewhere)"; fi
	$(VENV)/bin/tutorzoo eval --suite default --out $(DEMO_OUT) --overwrite $(DEMO_ARGS)

test: $(FULL) browser typecheck
	$(PY) -m pytest $(TESTS)

test-slow: $(FULL) browser
	$(PY) -m pytest -m slow

lint: $(CORE)
	$(VENV)/bin/ruff check .

# pyright (basic) on the packages [tool.pyright] in pyproject.toml names, against this venv's packages (pyright
# comes with the dev extra, with its own Node.js: no download at run time)
typecheck: $(CORE)
	$(PY) -m pyright --pythonpath $(PY)

bench: $(FULL)
	$(PIN)
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
