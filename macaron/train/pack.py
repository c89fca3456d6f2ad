"""The training data, packed: the tokenised corpus as compressed token ids, with its tokenizer.

    python -m macaron.train.pack --corpus data/corpus --tokenizer data/tokenizer.json --out ~/.cache/macaron/packed

A training run reads this folder instead of the text (`pretrain --data`): it is self-contained, checked
against its manifest, and lives outside the work tree with the run folder, so a fresh clone resumes
the same run on the same data. `<out>/` gets, per split, the arrays of `data.Split` as LZMA-compressed
`.npy` files (`train.ids.npy.xz`: uint16 token ids; `.sent`: sentence offsets; `.doc`: document
starts), plus `tokenizer.json`, the corpus's `stats.json` and `manifest.json` (tokens, bytes, hashes).
Nothing pickled: `np.load` reads them with `allow_pickle=False`.

With `--max-mib`, documents are dropped from the end of the training split until it fits; the corpus
builder shuffled them, so what remains is a random subset of whole documents, and the manifest says
how many tokens were kept. The validation split always stays whole.

`open_data` opens either for training: a packed folder, or a text corpus plus a tokenizer (macaron.train.data).
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import lzma
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from ..formats.folder import read_json
from .data import DataError, Split, load_tokenizer, pretokenize, read_stats, tokenizer_hash

ARRAYS = ("ids", "sent", "doc")
MANIFEST = "manifest.json"
XZ_PRESET = 6


def _compress(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    return lzma.compress(buf.getvalue(), preset=XZ_PRESET)


def _head(split: Split, n_docs: int) -> dict[str, np.ndarray]:
    """The first n_docs documents of a split, as its three arrays."""
    if n_docs >= len(split.doc):
        return {"ids": np.asarray(split.ids), "sent": split.sent, "doc": split.doc}
    end = int(split.doc[n_docs])
    n_sent = int(np.searchsorted(split.sent, end, "left"))
    return {"ids": np.asarray(split.ids[:end]), "sent": split.sent[: n_sent + 1], "doc": split.doc[:n_docs]}


def _blobs(arrays: dict[str, np.ndarray]) -> dict[str, bytes]:
    return {k: _compress(arrays[k]) for k in ARRAYS}


def fit(split: Split, max_bytes: int, log=print) -> tuple[dict[str, bytes], int]:
    """Compressed arrays of as many leading documents as fit max_bytes: (blobs, documents kept)."""
    n_docs = len(split.doc)
    for _ in range(8):  # the compression ratio barely depends on how much is kept: a few rounds converge
        blobs = _blobs(_head(split, n_docs))
        size = sum(map(len, blobs.values()))
        if size <= max_bytes:
            return blobs, n_docs
        n_docs = int(n_docs * max_bytes / size * 0.995)
        log(f"{size / 2**20:.1f} MiB is over {max_bytes / 2**20:.1f} MiB: keeping {n_docs:,} documents")
    raise DataError(f"could not fit the {split.name} split into {max_bytes / 2**20:.1f} MiB")


def pack(corpus, tokenizer, out, max_mib: float | None = None, log=print) -> dict:
    """Write the packed folder; returns its manifest."""
    t0 = time.time()
    tok = load_tokenizer(tokenizer)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    valid = pretokenize(corpus, tok, "valid", log=log)
    valid_blobs = _blobs(_head(valid, len(valid.doc)))
    budget = (int(max_mib * 2**20) if max_mib else 1 << 62) - sum(map(len, valid_blobs.values())) \
        - len(tok.to_str().encode())
    train = pretokenize(corpus, tok, "train", log=log)
    train_blobs, kept = fit(train, budget, log)
    manifest = {"tokenizer_hash": tokenizer_hash(tok), "vocab_size": tok.get_vocab_size(), "splits": {},
                "corpus": str(corpus), "date": time.strftime("%Y-%m-%d")}
    for name, split, blobs, docs in (("train", train, train_blobs, kept),
                                     ("valid", valid, valid_blobs, len(valid.doc))):
        head = _head(split, docs)
        for k, blob in blobs.items():
            (out / f"{name}.{k}.npy.xz").write_bytes(blob)
        manifest["splits"][name] = {
            "tokens": int(len(head["ids"])), "tokens_in_corpus": split.n_tokens,
            "documents": int(docs), "documents_in_corpus": int(len(split.doc)),
            "bytes": sum(map(len, blobs.values())),
            "sha256": {k: hashlib.sha256(b).hexdigest() for k, b in blobs.items()}}
    tok.save(str(out / "tokenizer.json"))
    stats = read_stats(Path(corpus) / "stats.json")
    (out / "stats.json").write_text(json.dumps(stats, indent=1) + "\n")
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    tr = manifest["splits"]["train"]
    total = sum(p.stat().st_size for p in out.iterdir())
    log(f"{out}: {tr['tokens']:,} training tokens ({tr['tokens'] / tr['tokens_in_corpus']:.0%} of the corpus), "
        f"{manifest['splits']['valid']['tokens']:,} validation tokens, {total / 2**20:.1f} MiB in all "
        f"({time.time() - t0:.0f} s)")
    return manifest


def load_split(folder, name: str, cache: Path) -> Split:
    """A split of a packed folder, checked against its manifest. `cache` receives the packing ranges."""
    folder = Path(folder)
    manifest = read_manifest(folder)
    expected = manifest["splits"].get(name)
    if expected is None:
        raise DataError(f"{folder / MANIFEST}: no {name!r} split")
    arrays = {}
    for k in ARRAYS:
        file = folder / f"{name}.{k}.npy.xz"
        try:
            blob = file.read_bytes()
        except OSError as e:
            raise DataError(f"{file}: missing packed array ({e})") from None
        if hashlib.sha256(blob).hexdigest() != expected["sha256"][k]:
            raise DataError(f"{file}: damaged (its hash differs from {MANIFEST})")
        arrays[k] = np.load(io.BytesIO(lzma.decompress(blob)), allow_pickle=False)
    cache = Path(cache)
    cache.mkdir(parents=True, exist_ok=True)
    return Split(arrays["ids"], arrays["sent"].astype(np.int64), arrays["doc"].astype(np.int64), cache, name)


def read_manifest(folder: Path) -> dict:
    return read_json(Path(folder) / MANIFEST, DataError)


def is_packed(folder) -> bool:
    return (Path(folder) / MANIFEST).is_file()


# ---- opening a corpus for training ---------------------------------------------------
@dataclass
class Data:
    """A corpus opened for training: tokenizer, both splits, the builder's statistics."""

    tok: Tokenizer
    train: Split
    valid: Split
    stats: dict
    tok_hash: str


def open_data(data, tokenizer, cache: Path, log=None) -> Data:
    """A packed folder (token ids, tokenizer and stats inside) or a text corpus plus a tokenizer."""
    if data is not None and is_packed(data):
        tok = load_tokenizer(Path(data) / "tokenizer.json")
        train, valid = load_split(data, "train", cache), load_split(data, "valid", cache)
    else:
        tok = load_tokenizer(tokenizer)
        train, valid = pretokenize(data, tok, "train", log=log), pretokenize(data, tok, "valid", log=log)
    if int(np.max(train.ids)) >= tok.get_vocab_size():
        raise DataError(f"{train.folder}: token ids exceed the vocabulary of the tokenizer")
    return Data(tok, train, valid, read_stats(Path(data) / "stats.json"), tokenizer_hash(tok))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m macaron.train.pack", description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", default="data/corpus")
    p.add_argument("--tokenizer", default="data/tokenizer.json")
    p.add_argument("--out", default=str(Path.home() / ".cache" / "macaron" / "packed"))
    p.add_argument("--max-mib", type=float, default=None, help="size limit of the folder (default: none)")
    args = p.parse_args(argv)
    try:
        pack(args.corpus, args.tokenizer, args.out, args.max_mib)
    except DataError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
