"""The models this server offers, read from its environment: the folders on its list (MACARON_MODELS,
MACARON_MODELS_DIR, else pretrained/ and this machine's caches), whether a visitor may name a Hub model
(MACARON_HUB), and the folders inside which a visitor may open their own (MACARON_MODEL_ROOTS).

Streamlit puts app/ on sys.path: explorer_state imports these, and the pages reach them through it.
"""
from __future__ import annotations

import os
from pathlib import Path

import macaron
from macaron.formats.registry import translates
from macaron.sources import locate as sources
from macaron.sources import shipped
from macaron.sources.shipped import default_pair


def _split_paths(value: str) -> list[str]:
    return [p.strip() for p in value.replace(os.pathsep, ",").split(",") if p.strip()]


def model_paths(translation: bool = False) -> dict[str, str]:
    """The models of one kind on offer: those that move one particle system (an encoder's or a decoder's), or with
    `translation` the encoder–decoders (the Translate page's); display name → folder, as all_model_paths."""
    return {name: path for name, path in all_model_paths().items() if translates(path) == translation}


def all_model_paths() -> dict[str, str]:
    """Display name → folder. MACARON_MODELS (folders, comma-separated) and MACARON_MODELS_DIR (a folder of model
    folders), when set, are the whole list; otherwise pretrained/*, then the models on this machine that load here:
    the local Hub cache's (by Hub id) and the imported releases (macaron.sources.locate.cached: files only, no network).
    Folders are absolute paths: a folder on offer is never read as a Hub id."""
    env_list, env_dir = os.environ.get("MACARON_MODELS", ""), os.environ.get("MACARON_MODELS_DIR", "")
    if not (env_list or env_dir):
        out = {name: str(shipped.PRETRAINED / name) for name in macaron.available()}
        for name, folder in sources.cached().items():
            out.setdefault(name, str(folder))
        return out
    out = {Path(p).name or p: str(Path(p).expanduser().absolute()) for p in _split_paths(env_list)}
    for d in _split_paths(env_dir):
        out.update({sub.name: str(sub.absolute()) for sub in sorted(Path(d).expanduser().glob("*"))
                    if (sub / "config.json").is_file()})
    return out


def hub_allowed() -> bool:
    """Whether a visitor may open a model from the Hugging Face Hub by name, downloading it where this server does
    not have it yet: MACARON_HUB=1. Off by default, so a class server downloads nothing a visitor names; within
    MACARON_HUB_MAX_GB (default 2) a model, judged from the Hub's file sizes before anything downloads."""
    return os.environ.get("MACARON_HUB", "").strip().lower() in ("1", "true", "yes", "on")


def model_roots() -> list[Path]:
    """The folders inside which a visitor may open a model folder of their own: MACARON_MODEL_ROOTS
    (comma-separated). None by default, so on a shared server nobody can load, or probe for, a path
    the operator did not offer; on your own computer, MACARON_MODEL_ROOTS=$HOME turns it on."""
    return [Path(p).expanduser().resolve() for p in _split_paths(os.environ.get("MACARON_MODEL_ROOTS", ""))]


def allowed_folder(text: str) -> str | None:
    """The folder `text` names, resolved (no '..', no symbolic link out), if it lies inside a model
    root; else None, whether or not it exists."""
    roots = model_roots()
    if not roots or not text.strip():
        return None
    folder = Path(text.strip()).expanduser().resolve()
    return str(folder) if any(folder.is_relative_to(root) for root in roots) else None


def default_paths() -> tuple[str, ...]:
    """The folders of the default Transformer and Macaron models (what the pages open first)."""
    paths = model_paths()
    return tuple(dict.fromkeys(paths[n] for n in default_pair(list(paths), paths) if n))
