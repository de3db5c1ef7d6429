# The two commands of the README. Both create and reuse .venv; both are idempotent.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e '.[spark,test,server,sql]'
	touch $(STAMP)

demo: $(STAMP)  ## the main job on the bundled example: a view update, proposed
	$(VENV)/bin/nablog check nablog/examples/chairs.lp
	$(VENV)/bin/nablog query nablog/examples/chairs.lp
	$(VENV)/bin/nablog propose nablog/examples/chairs.lp '+staff_chair(aravindan, gerhard).'

test: $(STAMP)  ## the test suite
	$(VENV)/bin/python -m pytest -q -n auto

bench: $(STAMP)  ## every benchmark (long; see bench/README.md)
	$(VENV)/bin/python -m pip install --quiet -e '.[spark,test,server,sql,bench]'
	$(VENV)/bin/python bench/materialize.py
	$(VENV)/bin/python bench/propose.py
	$(VENV)/bin/python bench/propagate.py
	$(VENV)/bin/python bench/repair.py
	$(VENV)/bin/python bench/monitor.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
