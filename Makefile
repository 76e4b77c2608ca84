# The two commands of the README. Both create/update .venv first, so they work on a
# fresh machine: `make run` (the lab on embedded defaults) and `make test` (every test).
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.requirements-installed
PORT ?= 8501

.PHONY: run test worker venv browser-deps

$(STAMP): requirements.txt
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -r requirements.txt
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/streamlit run app.py --server.port $(PORT) --server.address 127.0.0.1

worker: $(STAMP)
	$(VENV)/bin/python -m worker

# Debian chromium for the real-browser tests (Playwright drives it; no browser download).
browser-deps:
	test -x /usr/bin/chromium || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)

test: $(STAMP) browser-deps
	$(VENV)/bin/python -m pytest
