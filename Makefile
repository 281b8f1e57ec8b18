# SparkTide — the two commands: `make demo` and `make test`.
SHELL := /bin/bash
PYTHON := $(shell scripts/find-python)
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/sparktide
TEST_REDIS_URL ?= redis://127.0.0.1:6379/0
# pytest-xdist workers: much of the suite waits on processes, sockets and timeouts, so twice the
# cores. Each worker has its own test database (_gw<N>) and Redis database (tests/settings.py);
# a test file stays on one worker. PYTEST_WORKERS=0 runs in one process.
PYTEST_WORKERS ?= 4
XDIST := -n $(PYTEST_WORKERS) --dist loadfile
# The product's packages, top layer first (docs/design.md).
PACKAGES := sparktide console evaluation api runtime delivery feedback publication citations runs agents knowledge \
	tenancy foundation provisioning

.PHONY: demo demo-reset test venv lint services chromium clients java pytest pytest-sqlite jstest bench chaos mutation clean

$(VENV)/.installed: pyproject.toml clients/python/pyproject.toml
	@test -n "$(PYTHON)" || { scripts/find-python; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) -m pip install --quiet -e clients/python
	touch $@

venv: $(VENV)/.installed

demo: venv
	PORT=$(PORT) scripts/demo

# Only the demo's SQLite database: the secret key and the admin password under var/ stay.
DEMO_VAR := $(or $(SPARKTIDE_VAR_DIR),var)
demo-reset:
	rm -f $(DEMO_VAR)/sparktide.sqlite3 $(DEMO_VAR)/sparktide.sqlite3-wal $(DEMO_VAR)/sparktide.sqlite3-shm
	@echo "Demo database removed; make demo migrates and applies demo/manifest.yaml again."

services:
	scripts/ensure-services

chromium:
	scripts/ensure-chromium

clients:
	scripts/ensure-java
	scripts/ensure-sdk-tools

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache
	DEBUG=1 $(PY) manage.py makemigrations --check --dry-run
	DEBUG=1 $(VENV)/bin/mypy $(PACKAGES)

jstest:
	node --test tests/js/

# The reader's own tests (marked `reader`: no database) run once, in pytest-sqlite.
# In one process after the parallel pass: the fault scenarios, whose recovery deadlines assume
# the machine is not shared with three other workers, and a test that counts what one
# connection prepared since its process began.
SERIAL_TESTS := tests/publication/test_prepared_commit.py tests/reliability
PYTEST_PG := SPARKTIDE_TEST_STRICT=1 DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) \
	$(PY) -m pytest
pytest: venv services chromium clients
ifeq ($(strip $(PYTEST_ARGS)),)
	$(PYTEST_PG) $(XDIST) -m "not reader" $(foreach t,$(SERIAL_TESTS),--ignore=$(t))
	$(PYTEST_PG) $(SERIAL_TESTS)
else
	$(PYTEST_PG) $(XDIST) $(PYTEST_ARGS)
endif

# The core of the suite again on the embedded default (SQLite, in-memory channel layer): the
# run kernel, publication, citations, preview, runtime and answers. Strict, like pytest: a test
# that needs what only PostgreSQL has is marked @pytest.mark.postgres(reason=...) and skipped
# here with that reason. Its own var dir keeps it off the demo's database.
SQLITE_TESTS := tests/rules tests/conformance tests/publication tests/preview tests/runtime \
	tests/answers
pytest-sqlite: venv
	env -u DATABASE_URL -u REDIS_URL SPARKTIDE_TEST_STRICT=1 SPARKTIDE_VAR_DIR=$(CURDIR)/var/test-sqlite \
		$(PY) -m pytest $(XDIST) $(SQLITE_TESTS) $(PYTEST_ARGS)

test: venv services chromium clients lint jstest pytest pytest-sqlite

bench: venv services
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/publication.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/preview.py
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(PY) bench/delivery.py
	$(PY) bench/answers.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/retrieval.py
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(PY) bench/load.py
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(PY) bench/stream.py --no-replay

# One module at a time: make mutation MUTATION_MODULES="runs.access*" (docs/reliability.md
# "## Mutation" lists each module's time); empty runs every module in [tool.mutmut].
MUTATION_MODULES ?= runs.lifecycle* runs.access* publication.verification*
mutation: venv services
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) SPARKTIDE_TEST_STRICT=1 \
		scripts/mutation $(foreach m,$(MUTATION_MODULES),"$(m)")

# The fault suite at full size (≤ 15 min): one line of figures per scenario;
# non-zero exit on any loss. `make test` runs the short version of each scenario.
chaos: venv services
	SPARKTIDE_CHAOS=full SPARKTIDE_TEST_STRICT=1 DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) \
		$(PY) -m pytest tests/reliability/test_chaos*.py -q -s -p no:cacheprovider

clean:
	rm -rf $(VENV) var/*.sqlite3* var/staticfiles
