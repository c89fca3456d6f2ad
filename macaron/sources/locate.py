"""Where a model's folder comes from, for every place that takes a model's name: one `locate`.

In this order: a folder that exists; a shipped model's name (pretrained/); a model imported into the cache
(`fetch`'s releases, `<MACARON_CACHE>/models/<name>`); a release not yet fetched (a message naming the command);
else a Hugging Face Hub id, opened from the local Hub cache first and downloaded where it is missing
(macaron.sources.hub; HF_HUB_OFFLINE keeps to the cache). Nothing is looked up or downloaded before a name is opened.
"""
from __future__ import annotations

from pathlib import Path

from ..formats.folder import CheckpointError
from .hub import HubError, Progress, is_hub_id
from .hub import cached as hub_cached
from .hub import download as hub_download
from .hub import folder as hub_folder
from .hub import listed as hub_listed
from .releases import fetch as fetch_release
from .releases import imported, imported_dir, releases
from .shipped import available, resolve


def locate(path_or_name, progress: Progress | None = None) -> Path:
    """The folder of a model named by path, shipped name, imported release or Hub id (see the module)."""
    try:
        return resolve(path_or_name)
    except CheckpointError:
        name = str(path_or_name)
        if name in imported():
            return imported()[name]
        if name in releases():
            raise CheckpointError(f"{name}: not fetched yet; python -m macaron fetch {name} downloads and converts "
                                  f"it (into {imported_dir() / name})") from None
        if not is_hub_id(name):
            raise
    try:
        return hub_folder(name, progress=progress)
    except HubError as e:  # a typo of a shipped name ends here too: say every place it was looked for
        if not e.missing:
            raise
        raise HubError(f"{name}: no such folder, not one of the shipped models {available()} and, as a Hugging Face "
                       f"Hub id, {str(e).removeprefix(f'{name}: ')}", missing=True) from None


def cached() -> dict[str, Path]:
    """Name → folder of the models on this machine that are not shipped: the local Hub cache's that load here,
    then the imported releases (no network)."""
    return hub_listed() | imported()


def fetch(name: str, progress: Progress | None = None, say=print) -> Path:
    """`python -m macaron fetch NAME`: a release the paper's authors published (converted once), or a Hub id
    (into the Hub cache); a shipped name or a folder is already here."""
    if name in releases():
        return fetch_release(name, progress, say)
    if name in available() or Path(name).expanduser().is_dir():
        raise CheckpointError(f"{name}: already here (a shipped model or a folder); nothing to fetch")
    if not is_hub_id(name):
        raise CheckpointError(f"{name}: neither a release fetch knows ({', '.join(releases())}) nor a Hub "
                              f"model id (owner/name)")
    found = hub_cached(name)
    if found is not None:
        say(f"{name}: already in the local Hub cache, {found}")
        return found
    folder = hub_download(name, progress=progress)
    say(f"{name}: downloaded into the Hub cache, {folder}")
    return folder
