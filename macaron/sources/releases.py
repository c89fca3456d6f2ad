"""The seed paper's own models: its releases' archives fetched, unpacked safely and converted once.

    python -m macaron fetch paper-macaron-bert-base
    python -m macaron fetch paper-macaron-iwslt14-de-en        (and paper-macaron-wmt14-en-de-base, -big)

Lu et al. released their pretrained BERT-base-sized Macaron and their three translation models (small on IWSLT14
De→En, base and big on WMT14 En→De) as fairseq checkpoints in `.tbz2` archives on Google Drive, each with a second
archive: the binarised GLUE data, whose folders carry the BERT model's `dict.txt`, or the binarised test set, which
holds the translation model's dictionaries (`dict.{src}.txt`, `dict.{tgt}.txt`, as fairseq's preprocess.py names
them; joined vocabulary, so equal). Both are linked from the READMEs of github.com/zhuohan123/macaron-net
(`bert/`, `translation/`). This module downloads them (gdown, a progress bar each) into the cache (`MACARON_CACHE`,
default `~/.cache/macaron/`, under `paper/archives/`, one file per name, so base and big share the newstest2014
archive; an archive already there is not fetched again), unpacks them with no member outside its folder and no
links (a test set whole, under `paper/<name>/data`, where `release_test_set` finds it for the `bleu` command),
finds the checkpoint, the dictionaries and any BPE codes wherever they lie (the model's archive first) and hands
them to the fairseq importer (`convert`, the one seam to it), which writes our folder format into
`<cache>/models/<name>/`, where the explorer lists it. What it cannot find, it names, with the command that
imports the files by hand.

What differs between the releases is data on `Release` (the dictionaries' file names, whether the second archive is
a test set kept whole), not code: there is one `fetch`.
"""
from __future__ import annotations

import os
import shutil
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..formats.folder import CheckpointError

# Where the papers' READMEs link them (Google Drive's file ids); module constants, so a test can point them at a
# server of its own. gdown takes a Drive link or any plain URL.
MODEL_URL = "https://drive.google.com/uc?id=16zBuwzlkL2tTjzJvHX7dUV66fqtoyakc"
GLUE_URL = "https://drive.google.com/uc?id=1m_ytWY_zv62Gorgu77Uu6R0lOfbxz-7a"
IWSLT14_MODEL_URL = "https://drive.google.com/uc?id=1HnPJTxUKc6aqqXLlxOF0fourQN4K4zCo"
IWSLT14_TEST_URL = "https://drive.google.com/uc?id=1Vza4Yh7ev1336fWpgxGalkSLhb5dHxBa"
WMT14_BASE_URL = "https://drive.google.com/uc?id=1EzZdueTAI-dgPGjzxXyB7fgv97JcxgE6"
WMT14_BIG_URL = "https://drive.google.com/uc?id=1uonnRFE2ktjKTTlhgGY6sEVaKEXC9sLA"
WMT14_TEST_URL = "https://drive.google.com/uc?id=1bM11V3gjKH9eWVVzrP1FEtqiGAeE8t4o"
SOURCE = "github.com/zhuohan123/macaron-net, bert/README.md (Pre-trained Models)"
TRANSLATION_SOURCE = "github.com/zhuohan123/macaron-net, translation/README.md (Pre-trained Models)"

CHECKPOINT_FIRST = "checkpoint_pretrained.pt"  # the READMEs' name for the released weights
DICTIONARY = "dict.txt"
BPE_CODES = ("bpe-code", "bpe-codes", "bpe_code", "bpe_codes", "bpe.codes", "bpecodes", "codes", "code")
BY_HAND = "python -m macaron import-fairseq CHECKPOINT --dict DICT [--bpe-codes CODES] [--name NAME]"


class FetchError(CheckpointError):
    """A release that could not be fetched, unpacked or converted; the message says what and how to go on."""


@dataclass(frozen=True)
class Archive:
    url: str
    file: str   # its name in the cache (archives of one name are one file, shared by the releases that link it)
    what: str   # in words, for messages


@dataclass(frozen=True)
class Release:
    name: str
    model: Archive
    data: Archive  # holds the dictionaries where the model's archive does not
    note: str
    # the dictionaries' file names: one (a BERT model's dict.txt) or two (a translation model's source's, target's)
    dictionaries: tuple[str, ...] = (DICTIONARY,)
    # the data archive is the binarised test set: fetched always and unpacked whole (the bleu command reads it);
    # otherwise it is fetched only for a dictionary the model's archive lacks, and only the dictionaries kept
    test_set: bool = False


def _translation(name: str, model: Archive, test: Archive, src: str, tgt: str, note: str) -> Release:
    return Release(name, model, test, f"{note}; {TRANSLATION_SOURCE}", (f"dict.{src}.txt", f"dict.{tgt}.txt"), True)


def releases() -> dict[str, Release]:
    """The releases `fetch` knows, read from the module's URLs when asked (a test points them elsewhere)."""
    newstest = Archive(WMT14_TEST_URL, "wmt14-en-de-newstest2014-data-bin.tbz2",
                       "the binarised newstest2014, WMT14 En→De's test set (it holds the models' dictionaries)")
    known = [
        Release("paper-macaron-bert-base",
                Archive(MODEL_URL, "unsupervised-bert-base-pretrained-model.tbz2", "the pretrained Macaron-base"),
                Archive(GLUE_URL, "glue-data-bin.tbz2",
                        "the binarised GLUE data (its folders carry the model's dict.txt)"),
                f"Lu et al. (2019), Macaron-net base pretrained on Wikipedia + BookCorpus; {SOURCE}"),
        _translation("paper-macaron-iwslt14-de-en",
                     Archive(IWSLT14_MODEL_URL, "iwslt14-deen-pretrained-model.tbz2",
                             "Macaron-net small, IWSLT14 De→En"),
                     Archive(IWSLT14_TEST_URL, "iwslt14-de-en-test-data-bin.tbz2",
                             "the binarised IWSLT14 De→En test set (it holds the model's dictionaries)"),
                     "de", "en", "Lu et al. (2019), Macaron-net small (transformer_iwslt_de_en_macaron_v2) on "
                                 "IWSLT14 German→English, 35.4 BLEU in the paper"),
        _translation("paper-macaron-wmt14-en-de-base",
                     Archive(WMT14_BASE_URL, "wmt14-ende-base-pretrained-model.tbz2", "Macaron-net base, WMT14 En→De"),
                     newstest, "en", "de", "Lu et al. (2019), Macaron-net base (transformer_wmt_en_de_macaron_v2) "
                                           "on WMT14 English→German"),
        _translation("paper-macaron-wmt14-en-de-big",
                     Archive(WMT14_BIG_URL, "wmt14-ende-big-pretrained-model.tbz2", "Macaron-net big, WMT14 En→De"),
                     newstest, "en", "de", "Lu et al. (2019), Macaron-net big (transformer_wmt_en_de_big_t2t_macaron) "
                                           "on WMT14 English→German"),
    ]
    return {r.name: r for r in known}


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


def archives_dir() -> Path:
    """Where the releases' archives are kept, by file name (two releases that link one archive share it)."""
    return cache_home() / "paper" / "archives"


def release_dir(name: str) -> Path:
    """Where release `name`'s archives are unpacked: `model/` and `data/`."""
    return cache_home() / "paper" / name


def release_test_set(name: str) -> Path | None:
    """The folder of release `name`'s binarised test set as fetch unpacked it: the one under
    `<cache>/paper/<name>/data` (the archive nests it, e.g. data-bin/iwslt14.tokenized.de-en.joined/) that holds
    fairseq's `test.{src}-{tgt}.{lang}.bin/.idx` beside the dictionaries. None when `name` is no release with a
    test set, or its test set is not fetched yet (python -m macaron fetch NAME). (Not named test_*: a test module
    that imports it would have pytest collect it.)"""
    release = releases().get(name)
    data = release_dir(name) / "data"
    if release is None or not release.test_set or not data.is_dir():
        return None
    found = sorted(data.rglob("test*.idx"))
    return found[0].parent if found else None


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


def _archive(archive: Archive, name: str, progress) -> Path:
    """The archive, from where fetch kept it before archives were shared (`paper/<name>/archives/`) if it is
    there, else from archives_dir(), downloaded once."""
    kept = release_dir(name) / "archives" / archive.file
    return kept if kept.is_file() else download(archive, archives_dir(), progress)


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
def find_checkpoint(folder: Path, by_hand: str = BY_HAND) -> Path | None:
    """The release's checkpoint: checkpoint_pretrained.pt wherever it lies, else the only *.pt (None if none)."""
    found = sorted(p for p in folder.rglob("*.pt") if p.is_file())
    named = [p for p in found if p.name == CHECKPOINT_FIRST] or [p for p in found if "pretrained" in p.name]
    if named:
        return named[0]
    if len(found) > 1:
        raise FetchError(f"{folder}: several checkpoints ({', '.join(str(p.relative_to(folder)) for p in found)}) "
                         f"and none named {CHECKPOINT_FIRST}; convert the one you mean by hand: {by_hand}")
    return found[0] if found else None


def find_named(folders: list[Path], names: tuple[str, ...]) -> Path | None:
    """The first file named one of `names` under the folders, in the order given (then by path)."""
    for folder in folders:
        for name in names:
            found = sorted(p for p in folder.rglob(name) if p.is_file())
            if found:
                return found[0]
    return None


def _by_hand(release: Release, checkpoint: Path | None, dictionaries: list[Path | None], codes: Path | None,
             out: Path) -> str:
    """The import-fairseq command for this release, with the files found filled in and the others to be named."""
    flags = ("--dict",) if len(release.dictionaries) == 1 else ("--source-dict", "--target-dict")
    words = [f"python -m macaron import-fairseq {checkpoint or 'PATH/TO/' + CHECKPOINT_FIRST}"]
    words += [f"{flag} {found or 'PATH/TO/' + file}" for flag, found, file in
              zip(flags, dictionaries, release.dictionaries)]
    words.append(f"--bpe-codes {codes}" if codes else "[--bpe-codes PATH/TO/code]")
    return " ".join([*words, f"--out {out}"])


# ---- the seam to the fairseq importer ----------------------------------------------------------------------
def convert(checkpoint: Path, dictionary: Path | None, bpe_codes: Path | None, out: Path, *,
            source_dict: Path | None = None, target_dict: Path | None = None) -> Path:
    """The fairseq importer (macaron.formats.fairseq): the checkpoint (read as data only), its dictionary (a translation
    model's two: `source_dict`, `target_dict`) and BPE codes (None where the release has none: the reading is then
    approximate, and the card says so) to our folder `out`."""
    from ..formats.fairseq_import import import_fairseq  # sacremoses and the importer, only when a release is converted

    return import_fairseq(checkpoint, dictionary, bpe_codes, out, name=Path(out).name, source_dict=source_dict,
                          target_dict=target_dict)


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
    home = release_dir(name)
    model_dir = unpack(_archive(release.model, name, progress), home / "model")
    checkpoint = find_checkpoint(model_dir, _by_hand(release, None, [None] * len(release.dictionaries), None, out))
    folders = [model_dir]  # the model's archive first, then the data's
    lacking = any(find_named(folders, (file,)) is None for file in release.dictionaries)
    if checkpoint is not None and (release.test_set or lacking):  # no checkpoint: the data is not worth its download
        keep = set(release.dictionaries + BPE_CODES)
        folders.append(unpack(_archive(release.data, name, progress), home / "data",
                              wanted=None if release.test_set else lambda member: member.rsplit("/", 1)[-1] in keep))
    dictionaries = [find_named(folders, (file,)) for file in release.dictionaries]
    codes = find_named(folders, BPE_CODES)
    roles = ("dictionary",) if len(dictionaries) == 1 else ("source dictionary", "target dictionary")
    missing = [f"the {role} ({file})" for role, file, path in zip(roles, release.dictionaries, dictionaries)
               if path is None]
    if checkpoint is None:
        missing.insert(0, "the checkpoint (*.pt)")
    if missing:
        raise FetchError(f"{name}: {' and '.join(missing)} not found in the release's archives (unpacked in {home}). "
                         f"Supply them by hand: {_by_hand(release, checkpoint, dictionaries, codes, out)}")
    said = [f"checkpoint: {checkpoint}", *(f"{role}: {path}" for role, path in zip(roles, dictionaries)),
            f"BPE codes: {codes if codes else 'not in the release (the importer says what that leaves out)'}"]
    if release.test_set:
        said.append(f"test set: {release_test_set(name) or 'no test*.idx in ' + str(home / 'data')}")
    say("\n".join(said))
    partial = imported_dir() / ".partial" / name  # its own name: the importer may name the model after it
    shutil.rmtree(partial, ignore_errors=True)
    partial.parent.mkdir(parents=True, exist_ok=True)
    given = dict(source_dict=dictionaries[0], target_dict=dictionaries[1]) if len(dictionaries) == 2 else {}
    try:
        convert(checkpoint, None if given else dictionaries[0], codes, partial, **given)
        if not (partial / "config.json").is_file():
            raise FetchError(f"the importer wrote no config.json in {partial}")
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    partial.rename(out)
    say(f"{name}: converted into {out}")
    return out
