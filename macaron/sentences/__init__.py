"""Shipped sentence sets for measuring models over many sentences (macaron.studies.dynamics).

Written for this project, one sentence a line: `everyday` (160 sentences of daily life) and
`technical` (158 from computing, science and engineering). The models lowercase their input.
"""
from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
ALL = "all"


def names() -> list[str]:
    """The shipped sets, and "all" for every one of them."""
    return [ALL] + sorted(p.stem for p in HERE.glob("*.txt"))


def read(name_or_path: str | Path = ALL) -> list[str]:
    """The sentences of a shipped set ("all", "everyday", "technical") or of any text file, one a
    line; blank lines and lines starting with '#' are skipped."""
    if str(name_or_path) == ALL:
        return [s for name in names()[1:] for s in read(name)]
    path = HERE / f"{name_or_path}.txt" if str(name_or_path) in names() else Path(name_or_path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such sentence file; shipped sets are {names()}")
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith("#")]
