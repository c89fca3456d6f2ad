"""Models from the Hugging Face Hub by name: the local Hub cache first, then a download with a progress bar.

    macaron.load("bert-base-uncased")            # the Hub cache's copy; downloaded once where it is missing
    python -m macaron fetch google-bert/bert-base-uncased

Only what the explorer reads is fetched: config.json, the safetensors weights (model.safetensors, or the index
and its shards) and the tokenizer's files. Before any file is downloaded, the Hub's file list is read
(HfApi.model_info with the files' sizes): a repository without safetensors weights is refused (a pickle is never
loaded; a Marian translation model's pytorch_model.bin is read as data only, macaron.formats.marian), as is one of a
family we do not map (when the Hub names its model_type) and one larger than the limit (MACARON_HUB_MAX_GB, default 2);
then config.json alone, judged as a local folder's is (macaron.formats.encoders.family_of), and only then the weights.
No code from a repository is ever run.

The Hub's own settings are read when a name is opened, not when the module is imported: HF_HUB_CACHE (else
HF_HOME/hub), HF_HUB_OFFLINE (the cache only, never the network) and HF_ENDPOINT.
"""
from __future__ import annotations

import io
import json
import os
import re
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import Callable

import tqdm
from huggingface_hub import constants

from ..formats.decoders import DECODERS
from ..formats.encoders import FAMILIES, LOADS, family_of
from ..formats.folder import HF_MARIAN, INDEX, OURS, SINGLE, CheckpointError, read_config
from ..formats.marian import BIN, READING, marian_config

CONFIG = "config.json"
SHARDS = "model-*-of-*.safetensors"
WEIGHTS = (SINGLE, INDEX, SHARDS)
TOKENIZER = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt", "vocab.json",
             "merges.txt")
MARIAN_READING = ("source.spm", "target.spm", "target_vocab.json")  # a Marian model's text (macaron.formats.marian)
GENERATION = "generation_config.json"
TRANSLATION = (*MARIAN_READING, GENERATION)  # what a Marian model is downloaded with beside the rest
# What a cached snapshot is read for. The cache's file list calls a snapshot incomplete when a pattern names a listed
# file it lacks, so not what only a Marian model is downloaded with and other repositories list too (pytorch_model.bin,
# generation_config.json: GPT-2's snapshots never had it); complete() asks a Marian snapshot for its pickle.
PATTERNS = (CONFIG, *WEIGHTS, *TOKENIZER, *MARIAN_READING)
PICKLES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".h5", ".msgpack")
DEFAULT_MAX_GB = 2.0
# a Hub id: "name" or "owner/name"; letters, digits, '-', '_', '.'; no '--' or '..' (the Hub refuses those)
ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?(?:/[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?)?")

Progress = Callable[[int, int | None], None]


class HubError(CheckpointError):
    """A Hub model that cannot be opened: the message says why and what to do. `missing`: found nowhere (not in
    the local Hub cache, and the Hub not asked, not reached or without it), rather than found and refused."""

    def __init__(self, message: str, missing: bool = False):
        super().__init__(message)
        self.missing = missing


def is_hub_id(name) -> bool:
    """Whether `name` can be a Hub model id ("gpt2", "google-bert/bert-base-uncased"); not a path that exists."""
    name = str(name)
    return bool(ID.fullmatch(name)) and "--" not in name and ".." not in name


# ---- the Hub's settings, read when asked -----------------------------------------------------------------
def _true(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def offline() -> bool:
    """HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) set now or when huggingface_hub was imported."""
    return _true(os.environ.get("HF_HUB_OFFLINE")) or _true(os.environ.get("TRANSFORMERS_OFFLINE")) \
        or constants.HF_HUB_OFFLINE


def cache_dir() -> Path:
    """The local Hub cache: HF_HUB_CACHE, else HF_HOME/hub, else huggingface_hub's default."""
    for value in (os.environ.get("HF_HUB_CACHE"), os.environ.get("HUGGINGFACE_HUB_CACHE")):
        if value:
            return Path(value).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    return Path(constants.HF_HUB_CACHE)


def endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def max_bytes() -> int:
    """MACARON_HUB_MAX_GB (GB of 10⁹ bytes; default 2): the most a Hub model may weigh before it downloads."""
    raw = os.environ.get("MACARON_HUB_MAX_GB", "")
    try:
        gb = float(raw) if raw.strip() else DEFAULT_MAX_GB
    except ValueError:
        raise HubError(f"MACARON_HUB_MAX_GB={raw!r}: give a number of gigabytes, such as 2") from None
    return int(gb * 1e9)


def _gb(n: int) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e8 else f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB"


# ---- the local cache -------------------------------------------------------------------------------------
def complete(folder: Path) -> bool:
    """Whether a snapshot holds what loading reads: config.json and safetensors weights (every shard; a Marian
    model's may be pytorch_model.bin)."""
    if not (folder / CONFIG).is_file():
        return False
    if (folder / INDEX).is_file():
        try:
            shards = set(json.loads((folder / INDEX).read_text()).get("weight_map", {}).values())
        except (OSError, ValueError, AttributeError):
            return False
        return bool(shards) and all((folder / s).is_file() for s in shards)
    return (folder / SINGLE).is_file() or (folder / BIN).is_file() and _marian(folder)


def _marian(folder: Path) -> bool:
    try:
        return read_config(folder)[0] == HF_MARIAN
    except CheckpointError:
        return False


def cached(name: str, revision: str = "main") -> Path | None:
    """The local Hub cache's snapshot of `name` with everything loading reads, or None; never the network."""
    from huggingface_hub import snapshot_download

    try:
        folder = Path(snapshot_download(name, revision=revision, cache_dir=cache_dir(), local_files_only=True,
                                        allow_patterns=list(PATTERNS)))
    except (OSError, ValueError):  # LocalEntryNotFoundError, IncompleteSnapshotError; a malformed id
        return None
    return folder if complete(folder) else None


def listed() -> dict[str, Path]:
    """Every model in the local Hub cache that loads here: its main snapshot complete and its config.json of a
    family we map (or ours). Read from the files alone (no network), for the app's model picker."""
    root, out = cache_dir(), {}
    if not root.is_dir():
        return out
    for repo in sorted(root.glob("models--*")):
        try:
            folder = _main_snapshot(repo)
            if folder is None or not complete(folder):
                continue
            kind, fields = read_config(folder)
            if kind not in (OURS, HF_MARIAN):
                family_of(fields, folder)
        except (CheckpointError, OSError):  # a repository that does not load here is not listed
            continue
        out[repo.name.removeprefix("models--").replace("--", "/")] = folder
    return out


def _main_snapshot(repo: Path) -> Path | None:
    """The snapshot refs/main points to; where there is no such ref, the only snapshot there is."""
    ref = repo / "refs" / "main"
    try:
        sha = ref.read_text().strip() if ref.is_file() else None
    except OSError:
        return None
    snapshots = [p for p in (repo / "snapshots").glob("*") if p.is_dir()]
    if sha:
        return repo / "snapshots" / sha if (repo / "snapshots" / sha).is_dir() else None
    return snapshots[0] if len(snapshots) == 1 else None


# ---- before a download: what it would fetch --------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    """What a download of `name` fetches: the files and their total size, read from the Hub's file list."""
    name: str
    revision: str
    files: tuple[str, ...]
    size: int
    model_type: str | None


def _offline_message(name: str) -> str:
    return (f"{name}: not in the local Hub cache ({cache_dir()}), and HF_HUB_OFFLINE is set, so nothing is "
            f"downloaded. Fetch it once online (python -m macaron fetch {name}), or unset HF_HUB_OFFLINE")


def _ask(call, name: str, revision: str):
    """The Hub's answer to `call()`, or a HubError that says what went wrong in words."""
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        return call()
    except GatedRepoError:
        raise HubError(f"{name}: a gated model on the Hub; accept its terms on its page and log in "
                       f"(hf auth login), then fetch it again") from None
    except RepositoryNotFoundError:
        raise HubError(f"{name}: no such model on the Hub ({endpoint()}), or a private one; check the name "
                       f"(owner/name, as on its page)", missing=True) from None
    except RevisionNotFoundError:
        raise HubError(f"{name}: the Hub has no revision {revision!r} of it") from None
    except OfflineModeIsEnabled:
        raise HubError(_offline_message(name), missing=True) from None
    except HfHubHTTPError as e:
        raise HubError(f"{name}: the Hub answered {e}") from None
    except Exception as e:  # connection refused, no route, DNS, time-outs (httpx's errors are not OSErrors)
        raise HubError(f"{name}: not in the local Hub cache ({cache_dir()}), and the Hub ({endpoint()}) cannot be "
                       f"reached: is this machine offline? ({type(e).__name__}: {e})", missing=True) from None


def family_known(model_type: str) -> bool:
    """Whether a Hugging Face model_type is one of the families we map (encoders and decoders)."""
    return model_type in FAMILIES or model_type in DECODERS or model_type == "marian"


def plan(name: str, revision: str = "main", limit: int | None = None) -> Plan:
    """The files a download of `name` would fetch and their size, from the Hub's file list, or a HubError that
    refuses it: no safetensors weights, a family we do not map, no tokenizer.json, larger than `limit`
    (default max_bytes()). Nothing is downloaded."""
    from huggingface_hub import HfApi

    if offline():
        raise HubError(_offline_message(name), missing=True)
    limit = max_bytes() if limit is None else limit
    info = _ask(lambda: HfApi(endpoint=endpoint()).model_info(name, revision=revision, files_metadata=True),
                name, revision)
    sizes = {s.rfilename: s.size for s in info.siblings or []}
    model_type = (info.config or {}).get("model_type") if isinstance(info.config, dict) else None
    marian = model_type == "marian"
    if INDEX in sizes:
        weights = [INDEX] + [f for f in sizes if fnmatch(f, SHARDS)]
    else:
        weights = [SINGLE] if SINGLE in sizes else [BIN] if marian and BIN in sizes else []
    if not weights:
        pickled = sorted(f for f in sizes if f.endswith(PICKLES) and "/" not in f)
        raise HubError(f"{name}: no safetensors weights on the Hub ({SINGLE} or {INDEX})"
                       + (f", only {', '.join(pickled)}" if pickled else "")
                       + "; Macaron Explorer reads safetensors only and never loads a pickle. A safetensors "
                         "conversion may wait in the repository's pull requests")
    if model_type and not family_known(model_type):
        raise HubError(f"{name}: model_type {model_type!r}, a family this explorer does not map. These load: {LOADS}")
    if CONFIG not in sizes:
        raise HubError(f"{name}: no config.json on the Hub; not a model folder this explorer reads")
    if marian and any(f not in sizes for f in READING):
        raise HubError(f"{name}: a Marian model without {', '.join(f for f in READING if f not in sizes)} on the "
                       f"Hub: its text could not be read as MarianTokenizer reads it")
    if not marian and "tokenizer.json" not in sizes:
        raise HubError(f"{name}: no tokenizer.json on the Hub, so the explorer could not read text with it. "
                       f"Make a folder by hand: download it, and with transformers "
                       f"AutoTokenizer.from_pretrained(folder).save_pretrained(folder); then open the folder")
    files = tuple([CONFIG] + weights + [f for f in (*TOKENIZER, *(TRANSLATION if marian else ())) if f in sizes])
    unknown = [f for f in files if sizes.get(f) is None]
    if unknown:
        raise HubError(f"{name}: the Hub did not say how large {', '.join(unknown)} is; not downloaded")
    size = sum(sizes[f] for f in files)
    if size > limit:
        raise HubError(f"{name}: its files come to {_gb(size)}, over this machine's limit of {_gb(limit)} "
                       f"(MACARON_HUB_MAX_GB); nothing was downloaded. Set MACARON_HUB_MAX_GB="
                       f"{max(1, -(-size // 10**9))} to allow it")
    return Plan(name, revision, files, size, model_type)


# ---- the download ----------------------------------------------------------------------------------------
class TerminalBar(tqdm.tqdm):
    """A plain tqdm bar on stderr (huggingface_hub's own bars hide themselves off a terminal)."""


def reporting(progress: Progress) -> type[tqdm.tqdm]:
    """A silent tqdm class that reports the bytes of the download's byte bars to `progress(done, total)`
    (called from the download's threads: the app reads the numbers in its own thread)."""

    class Reporting(tqdm.tqdm):
        def __init__(self, *args, **kwargs):
            kwargs["file"] = io.StringIO()
            super().__init__(*args, **kwargs)

        def update(self, n=1):
            out = super().update(n)
            if self.unit == "B":
                progress(int(self.n), int(self.total) if self.total else None)
            return out

    return Reporting


def download(name: str, revision: str = "main", progress: Progress | None = None, limit: int | None = None) -> Path:
    """`name` downloaded into the Hub cache after plan() allowed it: config.json first, judged as a local folder's
    is (family_of names a family we do not map before any weight comes), then the rest with a progress bar (a
    terminal bar on stderr, or `progress(bytes done, total)`). Returns the snapshot folder."""
    from huggingface_hub import hf_hub_download, snapshot_download

    p = plan(name, revision, limit)
    where = dict(revision=revision, cache_dir=cache_dir(), endpoint=endpoint())
    config = Path(_ask(lambda: hf_hub_download(name, CONFIG, **where), name, revision))
    kind, fields = read_config(config.parent)
    if kind == HF_MARIAN:  # its config and its search's settings judged too, before any weight comes
        if GENERATION in p.files:
            _ask(lambda: hf_hub_download(name, GENERATION, **where), name, revision)
        marian_config(fields, config.parent, unk=0)
    elif kind != OURS:
        family_of(fields, config.parent)
    bar = TerminalBar if progress is None else reporting(progress)
    folder = Path(_ask(lambda: snapshot_download(name, allow_patterns=list(p.files), tqdm_class=bar, **where),
                       name, revision))
    if not complete(folder):
        raise HubError(f"{folder}: the download of {name} is incomplete; fetch it again")
    return folder


def folder(name: str, revision: str = "main", progress: Progress | None = None) -> Path:
    """The snapshot folder of Hub model `name`: the local cache's where it is complete, else downloaded
    (unless HF_HUB_OFFLINE is set: then a message that says so)."""
    found = cached(name, revision)
    if found is not None:
        return found
    return download(name, revision, progress)
