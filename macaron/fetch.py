"""The seed paper's own Macaron-base: its release's archives fetched, unpacked safely and converted once.

    python -m macaron fetch paper-macaron-bert-base

Lu et al. released their pretrained BERT-base-sized Macaron as a fairseq checkpoint in a `.tbz2` on Google
Drive, and the dictionary it was trained with (`dict.txt`) only inside the binarised GLUE data of a second
`.tbz2` (both linked from `bert/README.md` of github.com/zhuohan123/macaron-net). This module downloads them
(gdown, a progress bar each) into the cache (`MACARON_CACHE`, default `~/.cache/macaron/`; an archive already
there is not fetched again), unpacks them with no member outside its folder and no links, finds the checkpoint
and the dictionary wherever they lie, and hands them to the fairseq importer (`convert`, the one seam to it),
which writes our folder format into `<cache>/models/<name>/`, where the explorer lists it. What it cannot find,
it names, with the command that imports the files by hand.
"""
from __future__ import annotations

import os
import shutil
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .checkpoint import CheckpointError

# Where the paper's README links them (Google Drive's file ids); module constants, so a test can point them at a
# server of its own. gdown takes a Drive link or any plain URL.
MODEL_URL = "https://drive.google.com/uc?id=16zBuwzlkL2tTjzJvHX7dUV66fqtoyakc"
GLUE_URL = "https://drive.google.com/uc?id=1m_ytWY_zv62Gorgu77Uu6R0lOfbxz-7a"
SOURCE = "github.com/zhuohan123/macaron-net, bert/README.md (Pre-trained Models)"

CHECKPOINT_FIRST = "checkpoint_pretrained.pt"  # the README's name for the released weights
DICTIONARY = "dict.txt"
BPE_CODES = ("bpe-code", "bpe-codes", "bpe_code", "bpe_codes", "bpe.codes", "codes", "code")
BY_HAND = ("python -m macaron import-fairseq (its --help names the arguments: the checkpoint, the dict.txt "
           "and the BPE codes)")


class FetchError(CheckpointError):
    """A release that could not be fetched, unpacked or converted; the message says what and how to go on."""


@dataclass(frozen=True)
class Archive:
    url: str
    file: str   # its name in the cache
    what: str   # in words, for messages


@dataclass(frozen=True)
class Release:
    name: str
    model: Archive
    data: Archive  # holds the dictionary where the model's archive does not
    note: str


def releases() -> dict[str, Release]:
    """The releases `fetch` knows, read from the module's URLs when asked (a test points them elsewhere)."""
    return {"paper-macaron-bert-base": Release(
        "paper-macaron-bert-base",
        Archive(MODEL_URL, "unsupervised-bert-base-pretrained-model.tbz2", "the pretrained Macaron-base"),
        Archive(GLUE_URL, "glue-data-bin.tbz2", "the binarised GLUE data (its folders carry the model's dict.txt)"),
        f"Lu et al. (2019), Macaron-net base pretrained on Wikipedia + BookCorpus; {SOURCE}")}


# ---- where things are kept ---------------------------------------------------------------------------------
def cache_home() -> Path:
    """MACARON_CACHE, default ~/.cache/macaron (read when asked, so a test can point it elsewhere)."""
    return Path(os.environ.get("MACARON_CACHE") or Path.home() / ".cache" / "macaron").expanduser()


def imported_dir() -> Path:
    """Where converted models live, one folder each (the explorer's model picker lists them)."""
    return cache_home() / "models"


def imported() -> dict[str, Path]:
    """Name → folder of every model converted into imported_dir() (a folder with a config.json)."""
    root = imported_dir()
    return {p.name: p for p in sorted(root.glob("*")) if (p / "config.json").is_file()} if root.is_dir() else {}


# ---- downloading -------------------------------------------------------------------------------------------
def download(archive: Archive, folder: Path, progress: Callable[[int, int | None], None] | None = None) -> Path:
    """The archive in `folder`, downloaded once (gdown: a progress bar on stderr, or `progress(bytes, total)`);
    gdown writes a partial file and renames it when complete, so a file there is a whole one."""
    target = folder / archive.file
    if target.is_file():
        return target
    try:
        import gdown
    except ImportError:
        raise FetchError("fetching the paper's files needs gdown: pip install gdown==6.5.1") from None
    folder.mkdir(parents=True, exist_ok=True)
    print(f"{archive.what}: {archive.url}", file=sys.stderr)
    try:
        gdown.download(archive.url, str(target), quiet=progress is not None, progress=progress, use_cookies=False)
    except Exception as e:  # gdown's FileURLRetrievalError (Drive's quota, a moved file), HTTP and network errors
        raise FetchError(f"could not download {archive.what} from {archive.url}: {e}. Download it in a browser and "
                         f"put it at {target}, then run fetch again.") from None
    if not target.is_file():
        raise FetchError(f"{archive.url}: nothing was downloaded to {target}")
    return target


# ---- unpacking ---------------------------------------------------------------------------------------------
def _refused(member: tarfile.TarInfo) -> str | None:
    """Why a member may not be unpacked (it would land outside its folder, or is a link or a device), or None."""
    name = member.name.replace("\\", "/")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return "an absolute path"
    if ".." in name.split("/"):
        return "a path that climbs out of the folder (..)"
    if member.issym() or member.islnk():
        return f"a link (to {member.linkname})"
    if not (member.isfile() or member.isdir()):
        return "not a plain file or folder"
    return None


def unpack(archive: Path, target: Path, wanted: Callable[[str], bool] | None = None) -> Path:
    """The archive's members (those `wanted` by their name, default all) under `target`, read in one pass. A
    member outside its folder or a link is refused before anything of the archive is kept: the archive unpacks
    into `<target>.partial`, renamed to `target` only when complete, and removed when refused. tarfile's `data`
    filter guards each member again."""
    if target.is_dir():
        return target
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        with tarfile.open(archive, "r|*") as tar:  # a stream: one pass over a large bzip2 file
            for member in tar:
                why = _refused(member)
                if why:
                    raise FetchError(f"{archive}: member {member.name!r} is {why}; nothing of it was kept. The "
                                     f"archive is not the release's: delete it and fetch again")
                if wanted is None or member.isdir() or wanted(member.name):
                    tar.extract(member, partial, filter="data")
    except (tarfile.TarError, EOFError, OSError) as e:
        shutil.rmtree(partial, ignore_errors=True)
        raise FetchError(f"{archive}: not a readable .tbz2 archive ({e}); delete it (a download cut short, or a "
                         f"page in its place) and fetch again") from None
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    partial.rename(target)
    return target


# ---- finding the files -------------------------------------------------------------------------------------
def find_checkpoint(folder: Path) -> Path | None:
    """The release's checkpoint: checkpoint_pretrained.pt wherever it lies, else the only *.pt (None if none)."""
    found = sorted(folder.rglob("*.pt"))
    named = [p for p in found if p.name == CHECKPOINT_FIRST] or [p for p in found if "pretrained" in p.name]
    if named:
        return named[0]
    if len(found) > 1:
        raise FetchError(f"{folder}: several checkpoints ({', '.join(str(p.relative_to(folder)) for p in found)}) "
                         f"and none named {CHECKPOINT_FIRST}; convert the one you mean with {BY_HAND}")
    return found[0] if found else None


def find_named(folders: list[Path], names: tuple[str, ...]) -> Path | None:
    """The first file named one of `names` under the folders, in the order given (then by path)."""
    for folder in folders:
        for name in names:
            found = sorted(folder.rglob(name))
            if found:
                return found[0]
    return None


def _wanted_from_data(name: str) -> bool:
    return name.rsplit("/", 1)[-1] in (DICTIONARY, *BPE_CODES)


# ---- the seam to the fairseq importer ----------------------------------------------------------------------
def convert(checkpoint: Path, dictionary: Path, bpe_codes: Path | None, out: Path) -> Path:
    """The fairseq importer (macaron.fairseq): the checkpoint (read as data only), its dictionary and BPE codes (None
    where the release has none: the reading is then approximate, and the card says so) to our folder `out`."""
    from .fairseq import import_fairseq  # sacremoses and the importer, only when a release is converted

    return import_fairseq(checkpoint, dictionary, bpe_codes, out, name=Path(out).name)


# ---- the whole fetch ---------------------------------------------------------------------------------------
def fetch(name: str, progress: Callable[[int, int | None], None] | None = None, say=print) -> Path:
    """The release `name` (releases()) as a model folder in imported_dir(): downloaded, unpacked, found and
    converted, each step skipped where its result is already in the cache."""
    known = releases()
    if name not in known:
        raise FetchError(f"{name}: not a release fetch knows ({', '.join(known)}), nor a Hub model")
    release = known[name]
    out = imported_dir() / name
    if (out / "config.json").is_file():
        say(f"{name}: already imported in {out} (delete the folder to fetch and convert it again)")
        return out
    home = cache_home() / "paper" / name
    archives = home / "archives"
    model_dir = unpack(download(release.model, archives, progress), home / "model")
    checkpoint = find_checkpoint(model_dir)
    dictionary = find_named([model_dir], (DICTIONARY,))
    codes = find_named([model_dir], BPE_CODES)
    if checkpoint is not None and dictionary is None:  # the model's archive has no dictionary: the GLUE data does
        data_dir = unpack(download(release.data, archives, progress), home / "data", wanted=_wanted_from_data)
        dictionary = find_named([data_dir], (DICTIONARY,))
        codes = codes or find_named([data_dir], BPE_CODES)
    missing = [what for what, path in (("the checkpoint (*.pt)", checkpoint), ("the dictionary (dict.txt)", dictionary))
               if path is None]
    if missing:
        raise FetchError(f"{name}: {' and '.join(missing)} not found in the release's archives (unpacked in {home}). "
                         f"Supply them by hand: {BY_HAND}, with --out {out}")
    say(f"checkpoint: {checkpoint}\ndictionary: {dictionary}\nBPE codes: "
        f"{codes if codes else 'not in the release (the importer says what that leaves out)'}")
    partial = imported_dir() / ".partial" / name  # its own name: the importer may name the model after it
    shutil.rmtree(partial, ignore_errors=True)
    partial.parent.mkdir(parents=True, exist_ok=True)
    try:
        convert(checkpoint, dictionary, codes, partial)
        if not (partial / "config.json").is_file():
            raise FetchError(f"the importer wrote no config.json in {partial}")
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    partial.rename(out)
    say(f"{name}: converted into {out}")
    return out
