# Two commands do all set-up (see README.md):
#   make report   render the reports from the bundled data/
#   make test     run every test: unit tests and nbval over the notebooks,
#                 and build the documentation site (make docs)
# Both create and reuse the virtual environment in .venv and install the
# project from its own files (pyproject.toml, pinned by constraints.txt).

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: report test docs verify sample-data bench lint browser clean

# The environment of every run: VIRTUAL_ENV names this project's environment,
# whatever the calling shell had activated (IPython reads it for widgets and
# kernels); compiled modules are written (into __pycache__, which git ignores)
# even where the calling shell says not to (PYTHONDONTWRITEBYTECODE): a report
# starts a kernel per notebook and the tests some hundreds of Python processes
# (command lines, kernels, workers), each of which would compile the kit's
# modules again.
RUN := PYTHONDONTWRITEBYTECODE= VIRTUAL_ENV=$(abspath $(VENV))

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

# The bundled data holds tampered records on purpose, so its checks find
# something: --exit-zero renders the pages and exits 0 all the same (a failed
# notebook is still an error). Without it, report exits as verify does.
report: $(STAMP)
	$(RUN) $(BIN)/explicit-audit report data --out reports --exit-zero

verify: $(STAMP)
	$(BIN)/explicit-audit verify data

# Chromium renders the HTML reports in the browser test (Debian's package).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	  || echo "chromium could not be installed: the browser test will fail"; }

# The tests run in 3 processes (pytest-xdist), a file's tests in one of them: a
# notebook's cells run in order in one kernel, and a module's fixtures (a
# LocalCluster, a JupyterLab) start once.
# Three, on two cores: the browser, kernel and server tests wait more than they
# compute, and the longest modules start first (conftest.py, LONG_MODULES).
TEST_PROCESSES ?= 3
test: $(STAMP) browser docs
	$(BIN)/python -m ruff check explicit_audit tests benchmarks scripts docs/_sphinx
	$(RUN) $(BIN)/python -m pytest -n $(TEST_PROCESSES) --dist loadfile

# The documentation site, from docs/*.md and the docstrings, into build/docs/html.
# Every warning is an error (-W), every cross-reference is checked (-n), every page
# is read again (-E): a warning is never hidden by an earlier build. No notebook
# runs here; tests/test_docs.py runs the pages' code blocks.
docs: $(STAMP)
	$(BIN)/sphinx-build -M html docs build/docs -c docs/_sphinx -W --keep-going -n -E -q

sample-data: $(STAMP)
	$(BIN)/python -m scripts.sample_data data

bench: $(STAMP) browser
	$(BIN)/python benchmarks/bench_reading.py
	$(BIN)/python benchmarks/bench_receipts.py
	$(BIN)/python benchmarks/bench_plans.py
	$(BIN)/python benchmarks/bench_routing.py
	$(BIN)/python benchmarks/bench_dask.py
	$(BIN)/python benchmarks/bench_planning.py
	VIRTUAL_ENV=$(abspath $(VENV)) $(BIN)/python benchmarks/bench_panels.py

clean:
	rm -rf $(VENV) reports build .pytest_cache
