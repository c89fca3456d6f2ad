"""Benchmarks write their figures into RESULTS.md, one `## section` each, replaced on re-run."""
from __future__ import annotations

import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADER = ("# Benchmark results\n\nWritten by the scripts in this folder; each section is replaced when its script "
          "runs again.\n")


def write_section(title: str, body: str, path: Path = RESULTS) -> None:
    text = path.read_text() if path.exists() else HEADER
    section = f"## {title}\n\n{body.strip()}\n"
    pattern = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)
    text = pattern.sub(lambda _: section + "\n", text) if pattern.search(text) else text.rstrip() + "\n\n" + section
    path.write_text(text)
