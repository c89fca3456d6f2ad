"""tools/example.py, the explorer's main views from the library alone, runs on the tiny models."""
from __future__ import annotations

import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_example_writes_every_view(models_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["example.py", "--transformer", str(models_dir / "tiny-transformer"),
                                      "--macaron", str(models_dir / "tiny-macaron"), "--out", str(tmp_path)])
    runpy.run_path(str(ROOT / "tools" / "example.py"))
    views = {p.stem for p in tmp_path.glob("*.html")}
    assert views == {"particles", "logit-lens", "attribution", "mixing", "rhythm", "compare", "overlay", "cka",
                     "convergence", "lab-particles", "dynamics-clusters", "dynamics-leaders"}
    out = capsys.readouterr().out
    assert "Procrustes residual" in out and "effective clusters, median over sentences" in out
