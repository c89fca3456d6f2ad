"""The models shipped in pretrained/: their names, a name or path to its folder, and the pair the explorer opens
first."""
from __future__ import annotations

from pathlib import Path

from ..formats.folder import CheckpointError, read_facts

PRETRAINED = Path(__file__).resolve().parent.parent.parent / "pretrained"


def resolve(path_or_name) -> Path:
    path = Path(path_or_name).expanduser()
    if path.is_dir():
        return path
    if path.is_file():
        raise CheckpointError(f"{path}: a file; give the model's folder ({path.parent})")
    if (PRETRAINED / str(path_or_name)).is_dir():
        return PRETRAINED / str(path_or_name)
    raise CheckpointError(f"{path}: no such folder, and not one of the shipped models {available()}")


def available() -> list[str]:
    return sorted(p.name for p in PRETRAINED.glob("*") if (p / "config.json").is_file())


def in_training(folder) -> bool:
    """Whether a model folder holds a run still on its way: its training.json stops before its budget."""
    try:
        facts = read_facts(Path(folder))
        return bool(facts and facts.get("budget_steps")) and facts["steps"] < facts["budget_steps"]
    except (CheckpointError, KeyError, TypeError):
        return False


def default_pair(names: list[str], folders: dict | None = None) -> tuple[str | None, str | None]:
    """The pair the explorer opens first, (Transformer, Macaron): names containing 'transformer' and
    'macaron' of one size, '-small' before '-mini', a finished pair before one still in training (its
    folders: `folders`, else pretrained/); else whatever there is. default_pair(available())."""
    later = {n for n in names if in_training((folders or {}).get(n, PRETRAINED / n))}

    def pick(word, size="", finished=False, avoid=None):  # "transformer-mini" before "transformer-halves-mini"
        exact_first = sorted(names, key=lambda n: n.lower().rpartition("-")[0] != word)
        return next((n for n in exact_first if word in n.lower() and size in n.lower() and n != avoid
                     and not (finished and n in later)), None)

    for finished in (True, False):
        for size in ("-small", "-mini", ""):
            a = pick("transformer", size, finished)
            b = pick("macaron", size, finished, avoid=a)
            if a and b:
                return a, b
    a = pick("transformer") or (names[0] if names else None)
    return a, pick("macaron", avoid=a) or next((n for n in names if n != a), a)
