"""Serving a class, in small: five sessions at once against a real `streamlit run app/main.py`, driven
by the benchmark's own code (tools/served.py, which benchmarks/bench_server.py times) on the suite's
tiny models. Each session opens the link, types its own sentence on Particles and presses Enter, then
opens Compare. Two run in Chromium, a context each, and must see each figure drawn (the plot's SVG shows the sentence's
word) with no error element; three speak Streamlit's own protocol and must receive each figure with
no exception or error message. Timings are the benchmark's business, not asserted here."""
from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytest.importorskip("playwright.async_api")
pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists() and not shutil.which("chromium"),
                                reason="no Chromium")

import explorer_state as state  # noqa: E402
import served  # noqa: E402


def test_five_sessions_at_once_each_get_their_figures(models_dir, tokenizer, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("MACARON_MODELS", "MACARON_MODEL_ROOTS")}
    env["MACARON_MODELS_DIR"] = str(models_dir)
    assert served.FIRST_WORD in state.DEFAULT_SENTENCE.split()  # the benchmark waits for the app's first figure
    words = served.words_for(tokenizer, 5, state.DEFAULT_SENTENCE)
    log = tmp_path / "streamlit.log"
    with served.server(env, log) as (url, _):
        results, _ = asyncio.run(served.wave(url, words, served.FIRST_WORD, browsers=2))
    assert sorted(r["word"] for r in results) == sorted(words)
    for r in results:
        assert "failed" not in r and not r["errors"], r
        assert {"open", "enter", "compare"} <= set(r), r  # every figure drawn, each with its own sentence
    assert "Traceback" not in log.read_text()
