"""The table "What they guess" (docs/results/models.md): each model's top-5 guesses for every "[MASK]"
preset of the app, from its final weights (the last state through the MLM head: what the app's logit lens shows last).

    .venv/bin/python tools/guesses.py [name-or-folder …]      (default: every shipped model)

Prints a Markdown table, one row a sentence, one column a model, the guesses most likely first.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "app")]

import macaron  # noqa: E402
from explorer_state import PRESETS  # noqa: E402
from macaron.studies.analysis import MASK_TOKEN  # noqa: E402
from macaron.studies.learning import measure_stage  # noqa: E402


def main(names: list[str]) -> None:
    names = names or macaron.available()
    models = [macaron.load(n, device="cpu") for n in names]
    print("| sentence | " + " | ".join(Path(n).name for n in names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for text in (t for t in PRESETS.values() if MASK_TOKEN in t):
        cells = [", ".join(w if w.isalnum() else f"“{w}”" for w, _ in measure_stage(m, text).guesses) for m in models]
        print(f"| {text} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
