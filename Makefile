# The two set-up commands: `make demo` runs the product, `make test` runs the whole suite.
VENV ?= .venv
PY := $(VENV)/bin/python
MANAGE := $(PY) manage.py
PYTHON ?= python3
PORT ?= 8000

.PHONY: demo test lint worker clean

$(VENV)/.run-deps: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.dev-deps: $(VENV)/.run-deps
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

# Embedded default: SQLite and kombu's filesystem broker, so no server is needed. The worker
# runs in the background and stops with the web server (Ctrl+C).
demo: $(VENV)/.run-deps
	$(MANAGE) migrate --noinput
	$(MANAGE) load_demo
	@echo "Starting the evaluation worker and the web server at http://127.0.0.1:$(PORT)"
	$(PY) -m celery -A config worker -Q evaluation,imports,celery --beat --schedule var/celerybeat-schedule --concurrency 1 --loglevel warning & \
	  worker=$$!; trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
	  $(MANAGE) runserver 127.0.0.1:$(PORT)

worker: $(VENV)/.run-deps
	$(PY) -m celery -A config worker -Q evaluation,imports --beat --schedule var/celerybeat-schedule --concurrency 1 --loglevel info

lint: $(VENV)/.dev-deps
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy .

# Needs PostgreSQL and Redis on 127.0.0.1 (see README); .ci/run starts them. Two processes:
# much of the suite waits on workers, servers and the browser.
test: lint
	$(VENV)/bin/pytest -n 2

clean:
	rm -rf var .pytest_cache .mypy_cache .ruff_cache
