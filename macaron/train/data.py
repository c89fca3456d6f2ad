"""Pre-tokenised corpus, sequence packing, BERT masking and the model-independent data order.

Layout of the cache (next to the corpus, keyed by the tokenizer's hash):

    <corpus>/cache/<tokenizer-hash>/<split>.ids.npy      uint16, every token of the split, no specials
    <corpus>/cache/<tokenizer-hash>/<split>.sent.npy     int64 [S+1], token offset of every sentence (line)
    <corpus>/cache/<tokenizer-hash>/<split>.doc.npy      int64 [D], token offset where every document starts
    <corpus>/cache/<tokenizer-hash>/<split>.pack<L>.npy  int64 [N, 2], token range of every packed sequence
    <corpus>/cache/<tokenizer-hash>/<split>.json         fingerprint of the shards the arrays came from

A packed sequence is `[CLS] s_i s_i+1 ... s_j [SEP]`: whole sentences (lines) in corpus order, cut
only at sentence boundaries (a sentence longer than a sequence is cut into pieces). Documents may
share a sequence, separated by an extra [SEP] (RoBERTa's FULL-SENTENCES packing), so short
documents do not turn into padding; `cross_documents=False` starts a new sequence at every document.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer

from ..formats.folder import open_tokenizer, read_json
from .corpus import CorpusError, corpus_files

IGNORE = -100          # label of positions that carry no loss
SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
CACHE_VERSION = 2
ENCODE_CHUNK = 20_000  # lines per encode_batch call


class DataError(ValueError):
    """A corpus, tokenizer or cache that cannot be used; the message names the file."""


# ---- tokenizer ------------------------------------------------------------------------
@dataclass(frozen=True)
class Specials:
    pad: int
    unk: int
    cls: int
    sep: int
    mask: int
    vocab_size: int

    @property
    def never_masked(self) -> tuple[int, ...]:
        return (self.pad, self.cls, self.sep)

    @property
    def first_ordinary(self) -> int:
        """Random replacements are drawn from the ordinary tokens, above the special ids."""
        return max(self.pad, self.unk, self.cls, self.sep, self.mask) + 1


def load_tokenizer(path) -> Tokenizer:
    tok = open_tokenizer(Path(path), DataError)
    specials(tok, path)  # fail early on a tokenizer without BERT's special tokens
    return tok


def specials(tok: Tokenizer, path="tokenizer") -> Specials:
    ids = {t: tok.token_to_id(t) for t in SPECIALS}
    missing = [t for t, i in ids.items() if i is None]
    if missing:
        raise DataError(f"{path}: tokenizer lacks the special tokens {missing}")
    if tok.get_vocab_size() > 65535:
        raise DataError(f"{path}: vocabulary of {tok.get_vocab_size()} tokens does not fit uint16 arrays")
    return Specials(ids["[PAD]"], ids["[UNK]"], ids["[CLS]"], ids["[SEP]"], ids["[MASK]"], tok.get_vocab_size())


def tokenizer_hash(tok: Tokenizer) -> str:
    return hashlib.sha256(tok.to_str().encode()).hexdigest()[:16]


# ---- reading the text shards --------------------------------------------------------
def read_shard(file: Path) -> list[str]:
    """Lines of one shard ('' marks a document boundary); clear errors for empty or corrupt files."""
    try:
        raw = file.read_bytes()
    except OSError as e:
        raise DataError(f"{file}: cannot read corpus shard ({e})") from None
    if b"\x00" in raw:
        raise DataError(f"{file}: corrupt corpus shard (binary data: NUL byte at offset {raw.index(0)})")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"{file}: corrupt corpus shard (not UTF-8 text: {e})") from None
    lines = [line.strip() for line in text.splitlines()]
    if not any(lines):
        raise DataError(f"{file}: empty corpus shard (no text)")
    return lines


def fingerprint(files: list[Path]) -> list[list]:
    """Name, size and content hash of every shard: a rewritten but identical corpus keeps its cache."""
    out = []
    for f in files:
        h = hashlib.blake2b(digest_size=16)
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                h.update(block)
        out.append([f.name, f.stat().st_size, h.hexdigest()])
    return out


def read_stats(file: Path) -> dict:
    """The corpus builder's stats.json ({} when absent; an error naming the file when unreadable)."""
    file = Path(file)
    if not file.is_file():
        return {}
    stats = read_json(file, DataError)
    if not isinstance(stats, dict):
        raise DataError(f"{file}: corpus statistics should be a JSON object")
    return stats


# ---- pre-tokenising ----------------------------------------------------------------
@dataclass
class Split:
    """One pre-tokenised split: the token stream with sentence and document offsets."""

    ids: np.ndarray    # uint16 [n_tokens]
    sent: np.ndarray   # int64 [S+1]
    doc: np.ndarray    # int64 [D]
    folder: Path
    name: str

    @property
    def n_tokens(self) -> int:
        return int(self.sent[-1])


def _save(path: Path, array: np.ndarray):
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        np.save(f, array)
    os.replace(tmp, path)  # atomic: a reader never sees half a file, parallel builders do not clash


def _encode(tok: Tokenizer, files: list[Path], log=None):
    ids_parts, lengths, doc_sentence = [], [], []
    n_sent = 0
    for file in files:
        lines = read_shard(file)
        new_doc = True
        sentences = []
        for line in lines:
            if not line:
                new_doc = True
                continue
            if new_doc:
                doc_sentence.append(n_sent + len(sentences))
                new_doc = False
            sentences.append(line)
        for a in range(0, len(sentences), ENCODE_CHUNK):
            for enc in tok.encode_batch(sentences[a:a + ENCODE_CHUNK], add_special_tokens=False):
                ids_parts.append(np.asarray(enc.ids, dtype=np.uint16))
                lengths.append(len(enc.ids))
        n_sent += len(sentences)
        if log:
            log(f"tokenised {file.name}: {len(sentences):,} lines")
    ids = np.concatenate(ids_parts) if ids_parts else np.zeros(0, np.uint16)
    sent = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=sent[1:])
    doc = sent[np.asarray(doc_sentence, np.int64)]
    return ids, sent, doc


def pretokenize(corpus, tok: Tokenizer, split: str, log=None) -> Split:
    """The split as arrays, from the cache when the shards and the tokenizer are unchanged."""
    try:
        files = corpus_files(corpus, split, check=False)  # read_shard checks each one as it decodes it
    except CorpusError as e:
        raise DataError(str(e)) from None
    folder = Path(corpus) / "cache" / tokenizer_hash(tok)
    meta_file = folder / f"{split}.json"
    meta = {"version": CACHE_VERSION, "shards": fingerprint(files), "vocab_size": tok.get_vocab_size()}
    names = {k: folder / f"{split}.{k}.npy" for k in ("ids", "sent", "doc")}
    if meta_file.is_file() and all(p.is_file() for p in names.values()):
        try:
            cached = json.loads(meta_file.read_text())
        except json.JSONDecodeError:
            cached = None
        if cached == meta:
            try:
                arrays = {k: np.load(p, mmap_mode="r") for k, p in names.items()}
                return Split(arrays["ids"], np.asarray(arrays["sent"]), np.asarray(arrays["doc"]), folder, split)
            except (ValueError, OSError):
                pass  # a damaged cache is rebuilt
    ids, sent, doc = _encode(tok, files, log)
    if len(ids) == 0:
        raise DataError(f"{files[0].parent}: the {split} shards hold no tokens")
    folder.mkdir(parents=True, exist_ok=True)
    for k, a in (("ids", ids), ("sent", sent), ("doc", doc)):
        _save(names[k], a)
    for old in folder.glob(f"{split}.pack*.npy"):
        old.unlink(missing_ok=True)  # packings of the old arrays are stale
    tmp = meta_file.with_name(f".{meta_file.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(meta))
    os.replace(tmp, meta_file)
    return Split(np.load(names["ids"], mmap_mode="r"), sent, doc, folder, split)


# ---- packing ------------------------------------------------------------------------
def pack_ranges(sent: np.ndarray, doc: np.ndarray, seq_len: int, cross_documents: bool = True) -> np.ndarray:
    """Token ranges [N, 2] of packed sequences of at most seq_len tokens with [CLS]/[SEP] and the
    [SEP]s between documents counted. Cuts fall on sentence boundaries only, except inside a
    sentence too long for one sequence."""
    room = seq_len - 2
    if room < 1:
        raise ValueError(f"seq_len={seq_len} leaves no room for tokens between [CLS] and [SEP]")
    starts = set(doc.tolist())
    out = []
    a = cur = None  # start of the open sequence, its token count (with inner [SEP]s)
    for s in range(len(sent) - 1):
        lo, hi = int(sent[s]), int(sent[s + 1])
        if hi == lo:
            continue
        new_doc = lo in starts
        if a is not None and new_doc and not cross_documents:
            out.append((a, lo))
            a = None
        if a is not None:
            extra = (hi - lo) + (1 if new_doc else 0)
            if cur + extra <= room:
                cur += extra
                continue
            out.append((a, lo))
            a = None
        while hi - lo > room:  # a sentence longer than a sequence: cut it into pieces
            out.append((lo, lo + room))
            lo += room
        a, cur = lo, hi - lo
    if a is not None:
        out.append((a, int(sent[-1])))
    return np.asarray(out, dtype=np.int64).reshape(-1, 2)


class Packed:
    """Packed sequences of a split, materialised on demand as `[CLS] ... [SEP]` rows."""

    def __init__(self, split: Split, sp: Specials, seq_len: int, cross_documents: bool = True):
        self.split, self.sp, self.seq_len = split, sp, seq_len
        file = split.folder / f"{split.name}.pack{seq_len}{'' if cross_documents else 'd'}.npy"
        ranges = None
        if file.is_file():
            try:
                ranges = np.load(file)
            except (ValueError, OSError):
                ranges = None
        if ranges is None:
            ranges = pack_ranges(split.sent, split.doc, seq_len, cross_documents)
            _save(file, ranges)
        self.ranges = ranges
        self.doc = np.asarray(split.doc)
        inner = np.searchsorted(self.doc, ranges[:, 1], "left") - np.searchsorted(self.doc, ranges[:, 0], "right")
        self.lengths = (ranges[:, 1] - ranges[:, 0] + 2 + inner).astype(np.int64)  # real tokens of each row

    def __len__(self) -> int:
        return len(self.ranges)

    def row(self, i: int) -> np.ndarray:
        a, b = (int(x) for x in self.ranges[i])
        body = np.asarray(self.split.ids[a:b], dtype=np.int64)
        lo, hi = np.searchsorted(self.doc, a, "right"), np.searchsorted(self.doc, b, "left")
        if hi > lo:  # [SEP] before every document that starts inside the sequence
            body = np.insert(body, self.doc[lo:hi] - a, self.sp.sep)
        return np.concatenate(([self.sp.cls], body, [self.sp.sep]))

    def batch(self, indices) -> tuple[torch.Tensor, torch.Tensor]:
        """ids [B, T] (padded to the longest row) and attention_mask [B, T] (True on real tokens, False on padding)."""
        rows = [self.row(int(i)) for i in indices]
        T = max(map(len, rows))
        ids = np.full((len(rows), T), self.sp.pad, dtype=np.int64)
        for r, row in enumerate(rows):
            ids[r, : len(row)] = row
        ids = torch.from_numpy(ids)
        return ids, ids != self.sp.pad


# ---- masking ------------------------------------------------------------------------
def mask_tokens(ids: torch.Tensor, sp: Specials, generator: torch.Generator, rate: float = 0.15,
                mask_frac: float = 0.8, random_frac: float = 0.1):
    """BERT's masking: `rate` of the maskable tokens (never [CLS]/[SEP]/[PAD]) are chosen; of those
    80% become [MASK], 10% a random ordinary token, 10% stay. Returns (inputs, labels) with
    labels = IGNORE outside the chosen positions."""
    maskable = torch.ones_like(ids, dtype=torch.bool)
    for t in sp.never_masked:
        maskable &= ids != t
    chosen = (torch.rand(ids.shape, generator=generator) < rate) & maskable
    if not bool(chosen.any()) and bool(maskable.any()):  # at least one target per batch
        first = maskable.flatten().nonzero()[0]
        chosen.view(-1)[first] = True
    labels = torch.where(chosen, ids, torch.full_like(ids, IGNORE))
    u = torch.rand(ids.shape, generator=generator)
    to_mask = chosen & (u < mask_frac)
    to_random = chosen & (u >= mask_frac) & (u < mask_frac + random_frac)
    inputs = ids.clone()
    inputs[to_mask] = sp.mask
    randoms = torch.randint(sp.first_ordinary, sp.vocab_size, ids.shape, generator=generator)
    inputs[to_random] = randoms[to_random]
    return inputs, labels


def generator_for(*key: int) -> torch.Generator:
    """A torch generator seeded from integers (seed, step, ...): masks re-drawn for every visit yet
    reproducible, identical for every model trained with the same seed."""
    g = torch.Generator()
    g.manual_seed(int(np.random.SeedSequence([int(k) for k in key]).generate_state(1, np.uint64)[0] >> 1))
    return g


# ---- the data order -----------------------------------------------------------------
class Order:
    """Which sequences form global batch number `step`: a seeded permutation per epoch, independent
    of the model. Global batch `step` takes `batch` consecutive sequences of the stream of epochs;
    rank r of W takes the r-th of W equal, disjoint slices of it."""

    def __init__(self, n: int, batch: int, seed: int):
        if n < batch:
            raise DataError(f"only {n} packed training sequences: fewer than one batch of {batch}")
        self.n, self.batch, self.seed = n, batch, seed
        self.per_epoch = n // batch  # the incomplete tail of every permutation is skipped
        self._perm_epoch, self._perm = -1, None

    def perm(self, epoch: int) -> np.ndarray:
        if epoch != self._perm_epoch:
            self._perm = np.random.default_rng([self.seed, epoch]).permutation(self.n)
            self._perm_epoch = epoch
        return self._perm

    def indices(self, step: int) -> np.ndarray:
        epoch, k = divmod(step, self.per_epoch)
        return self.perm(epoch)[k * self.batch:(k + 1) * self.batch]

    def epoch(self, step: int) -> float:
        return step / self.per_epoch

    def tokens_for_steps(self, steps: int, lengths: np.ndarray) -> int:
        """Real tokens in the first `steps` global batches."""
        total, step, epoch = 0, 0, 0
        while step < steps:
            n = min(self.per_epoch, steps - step)
            total += int(lengths[self.perm(epoch)[: n * self.batch]].sum())
            step, epoch = step + n, epoch + 1
        return total

    def steps_for_tokens(self, tokens: int, lengths: np.ndarray) -> int:
        """Optimizer steps until `tokens` real tokens have been seen (exact: the order is fixed)."""
        seen, step = 0, 0
        epoch = 0
        while True:
            per_batch = lengths[self.perm(epoch)[: self.per_epoch * self.batch]].reshape(self.per_epoch, -1).sum(1)
            cum = seen + np.cumsum(per_batch)
            hit = int(np.searchsorted(cum, tokens, "left"))
            if hit < len(cum):
                return step + hit + 1
            seen, step, epoch = int(cum[-1]), step + self.per_epoch, epoch + 1


def held_out_batches(packed: Packed, n_seqs: int, batch: int, seed: int, pad_to: int | None = None):
    """The fixed held-out set: the first n_seqs packed validation sequences, masked once with a fixed
    seed, so every model (and every evaluation) sees exactly the same inputs and targets."""
    n = min(n_seqs, len(packed))
    g = generator_for(seed, 0xE7A1)
    out = []
    for a in range(0, n, batch):
        ids, attention_mask = packed.batch(range(a, min(n, a + batch)))
        inputs, labels = mask_tokens(ids, packed.sp, g)
        out.append(padded(inputs, attention_mask, labels, packed.sp, pad_to))
    return out


def padded(inputs, attention_mask, labels, sp: Specials, length: int | None):
    """The batch right-padded to `length` columns (one shape for a compiled model). Padding comes
    after masking, so the masks do not depend on it."""
    if length is None or inputs.shape[1] >= length:
        return inputs, attention_mask, labels
    extra = length - inputs.shape[1]

    def grow(t, value):
        return torch.cat([t, torch.full((len(t), extra), value, dtype=t.dtype)], dim=1)

    return grow(inputs, sp.pad), grow(attention_mask, False), grow(labels, IGNORE)
