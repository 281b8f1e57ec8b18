# SparkTide — the two commands: `make demo` and `make test`.
SHELL := /bin/bash
PYTHON := $(shell scripts/find-python)
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/sparktide
TEST_REDIS_URL ?= redis://127.0.0.1:6379/0

.PHONY: demo test venv lint services chromium pytest jstest bench clean

$(VENV)/.installed: pyproject.toml
	@test -n "$(PYTHON)" || { scripts/find-python; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

venv: $(VENV)/.installed

demo: venv
	PORT=$(PORT) scripts/demo

services:
	scripts/ensure-services

chromium:
	scripts/ensure-chromium

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache
	DEBUG=1 $(PY) manage.py makemigrations --check --dry-run

jstest:
	node --test tests/js/

pytest: venv services chromium
	SPARKTIDE_TEST_STRICT=1 DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(PY) -m pytest $(PYTEST_ARGS)

test: venv services chromium lint jstest pytest

bench: venv services
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/publication.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/preview.py
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(PY) bench/delivery.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/retrieval.py

clean:
	rm -rf $(VENV) var/*.sqlite3* var/staticfiles
