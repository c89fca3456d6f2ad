"""Models from the Hugging Face Hub by name: the local Hub cache first, then a download with a progress bar.

    macaron.load("bert-base-uncased")            # the Hub cache's copy; downloaded once where it is missing
    python -m macaron fetch google-bert/bert-base-uncased

Only what the explorer reads is fetched: config.json, the weights and the files its format reads text with
(formats.registry: the format names them; this module names no family). Before any file is downloaded, the Hub's file
list is read (HfApi.model_info with the files' sizes): a repository without safetensors weights is refused (a pickle is
never loaded; a format whose older folders hold pickled weights reads them as data only), as is one of a family no
format maps (when the Hub names its model_type) and one larger than the limit (MACARON_HUB_MAX_GB, default 2); then
config.json alone, judged as a local folder's is (formats.registry.read), and only then the weights.
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

from ..formats import registry
from ..formats.base import CONFIG
from ..formats.folder import INDEX, SINGLE, CheckpointError

SHARDS = "model-*-of-*.safetensors"
# What a cached snapshot is read for: config.json, safetensors weights and every file a format may fetch. The cache's
# file list calls a snapshot incomplete when a pattern names a listed file it lacks, so not the files a format reads
# only where they are (its `settings`: Marian's generation_config.json, which GPT-2's snapshots never had) nor a
# format's other weights (Marian's pytorch_model.bin): complete() asks a snapshot's format for those.
PATTERNS = tuple(dict.fromkeys((CONFIG, SINGLE, INDEX, SHARDS, *(f for fmt in registry.FORMATS for f in fmt.files))))
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
    if (folder / SINGLE).is_file():
        return True
    try:  # a format's other weights (Marian's pytorch_model.bin, read as data only)
        fmt = registry.recognise(registry.fields_of(folder))
    except CheckpointError:
        return False
    return fmt is not None and any((folder / w).is_file() for w in fmt.weights)


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
            registry.read(folder)
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
    fmt = registry.of_type(model_type)
    if INDEX in sizes:
        weights = [INDEX] + [f for f in sizes if fnmatch(f, SHARDS)]
    else:
        weights = [w for w in (fmt.weights if fmt else (SINGLE,)) if w in sizes and w != INDEX][:1]
    if not weights:
        pickled = sorted(f for f in sizes if f.endswith(PICKLES) and "/" not in f)
        raise HubError(f"{name}: no safetensors weights on the Hub ({SINGLE} or {INDEX})"
                       + (f", only {', '.join(pickled)}" if pickled else "")
                       + "; Macaron Explorer reads safetensors only and never loads a pickle. A safetensors "
                         "conversion may wait in the repository's pull requests")
    if fmt is None:
        raise HubError(f"{name}: model_type {model_type!r}, a family this explorer does not map. These load: "
                       f"{registry.LOADS}")
    if CONFIG not in sizes:
        raise HubError(f"{name}: no config.json on the Hub; not a model folder this explorer reads")
    try:
        files = (CONFIG, *weights, *fmt.needs(set(sizes)))
    except CheckpointError as e:
        raise HubError(f"{name}: {e}") from None
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
    is (formats.registry.read names a family or setting we do not map before any weight comes), then the rest with a
    progress bar (a terminal bar on stderr, or `progress(bytes done, total)`). Returns the snapshot folder."""
    from huggingface_hub import hf_hub_download, snapshot_download

    p = plan(name, revision, limit)
    where = dict(revision=revision, cache_dir=cache_dir(), endpoint=endpoint())
    config = Path(_ask(lambda: hf_hub_download(name, CONFIG, **where), name, revision))
    fmt = registry.recognise(registry.fields_of(config.parent))
    for file in fmt.judged_with if fmt else ():  # what its judge reads besides config.json (Marian's search settings)
        if file != CONFIG and file in p.files:
            _ask(lambda: hf_hub_download(name, file, **where), name, revision)
    registry.read(config.parent)  # judged as a local folder's is: a family or setting we do not map named here
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
