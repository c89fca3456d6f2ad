"""Cleaning shared by every source: whitespace, markup, language, length, dedup, the split."""
from __future__ import annotations

import hashlib
import re
from typing import Iterable, Iterator

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


def strip_tags(text: str, by: str = " ") -> str:
    """Every markup tag (`<i>`, `</category>`) replaced by `by`."""
    return _TAG.sub(by, text)


def strip_html(text: str) -> str:
    """`<br />` marks a paragraph break in IMDB reviews; other tags are dropped."""
    return strip_tags(_BR.sub("\n", text))


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


def is_wikitext_title(line: str) -> bool:
    """` = Title = ` only (a single '='): the line that starts a new article."""
    return bool(_WIKI_TITLE.match(line))


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
