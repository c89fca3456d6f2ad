"""What a model reads: text or token ids to a row (ids, display tokens, tokens dropped, where the head answers).

A row is what `Model.read` returns and what a Trajectory is built from; an InputError's message is written for the
person who typed the text.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..config import ModelConfig
from ..trajectory import MASK_TOKEN

# a folder with vocab.txt or vocab.json + merges.txt only: transformers converts them to the one format we read
NO_TOKENIZER = ("its folder has no tokenizer.json, which transformers writes with "
                "AutoTokenizer.from_pretrained(folder).save_pretrained(folder)")

FLOATER_MAX_TOKENS = 4096  # FLOATER extends past max_len; this bound keeps a trace within memory

Row = tuple[list[int], list[str], int, "int | None"]  # ids, display tokens, tokens dropped, Trajectory.guess_at


class InputError(ValueError):
    """Text the model cannot run on; the message is written for the person who typed it."""


@dataclass(frozen=True)
class Reader:
    """A model's reading of text: its tokenizer, its limit, and whether a masked-word head answers a [MASK]."""

    config: ModelConfig
    tokenizer: object  # HF tokenizers.Tokenizer, or None (token ids only)
    mlm_head: bool

    @property
    def limit(self) -> int:
        """The most tokens the model reads (FLOATER's flow extends past max_len, up to a bound)."""
        extends = self.config.position == "floater" and self.config.attention == "dot"
        return FLOATER_MAX_TOKENS if extends else self.config.max_len

    def text(self, text: str, limit: int | None = None) -> Row:
        """At most `limit` tokens and the model's own limit, the last token ([SEP]) kept last, as in training (a
        decoder keeps its first tokens). A decoder has no [MASK] token: the first [MASK] typed is taken out, and
        the word it stands for is the one the decoder expects after the token before it."""
        if self.tokenizer is None:
            raise InputError(f"this model has no tokenizer: pass token ids instead of text (if loaded from a "
                             f"folder: {NO_TOKENIZER})")
        if not isinstance(text, str) or not text.strip():
            raise InputError("The text is empty: type a sentence.")
        before, mask, after = text.partition(MASK_TOKEN) if self.config.causal else (text, "", "")
        ids, tokens = self._encode(before.rstrip() if mask else before)
        typed = len(ids) - 1 if mask else None  # the token before a decoder's [MASK] (-1: nothing before it)
        if after.strip():  # the rest of the same text: no second beginning-of-text token
            more = self._encode(after, specials=False)
            ids, tokens = ids + more[0], tokens + more[1]
        if not ids or (len(ids) <= 2 and ids[0] == self.tokenizer.token_to_id("[CLS]")):  # no words, or [CLS] [SEP]
            raise InputError("The text has no readable tokens: type a sentence with words in it.")
        keep = self.limit if limit is None else min(limit, self.limit)
        if keep < 2:
            raise ValueError(f"max_tokens={limit}: keep at least two tokens ([CLS] and [SEP])")
        dropped = max(0, len(ids) - keep)
        if dropped and self.config.causal:  # a decoder reads from the start: the first tokens are kept
            ids, tokens = ids[:keep], tokens[:keep]
        elif dropped:
            ids, tokens = ids[: keep - 1] + ids[-1:], tokens[: keep - 1] + tokens[-1:]
        return ids, tokens, dropped, self._guess_at(tokens, typed)

    def ids(self, ids) -> Row:
        """Token ids (a list or 1-D tensor), checked against the vocabulary and the limit, read as given."""
        ids = [int(i) for i in (ids.tolist() if torch.is_tensor(ids) else ids)]
        if not ids:
            raise InputError("no token ids given")
        bad = [i for i in ids if not 0 <= i < self.config.vocab_size]
        if bad:
            raise InputError(f"token ids {bad[:5]} are outside the vocabulary (size {self.config.vocab_size})")
        if len(ids) > self.limit:
            raise InputError(f"{len(ids)} tokens exceed this model's limit of {self.limit}")
        tokens = [self.token(i) for i in ids]
        return ids, tokens, 0, self._guess_at(tokens)

    def token(self, i: int) -> str:
        """The display token of id `i`; `<id 317>` for an id the vocabulary names no token for (a model may have more
        embeddings than its vocabulary has entries, as a Marian vocab.json may), the id alone with no tokenizer."""
        token = self.tokenizer.id_to_token(i) if self.tokenizer else str(i)
        return f"<id {i}>" if token is None else token

    def _guess_at(self, tokens: list[str], typed: int | None = None) -> int | None:
        """Trajectory.guess_at: a decoder's token before a typed [MASK] (`typed`; None where it is cut off or has
        nothing before it) or, with no [MASK], its last token; an encoder's first [MASK]."""
        if self.config.causal and self.config.lm_head:
            if typed is None:  # the word after the sentence
                return len(tokens) - 1
            return typed if 0 <= typed < len(tokens) else None
        return tokens.index(MASK_TOKEN) if self.mlm_head and MASK_TOKEN in tokens else None

    def _encode(self, text: str, specials: bool = True) -> tuple[list[int], list[str]]:
        """Ids and display tokens of a text; a token the model could not read shows what it was ([UNK:…]), and a
        decoder's byte-level or SentencePiece token the text it covers ("Ġbank" and "▁bank" read "bank")."""
        enc = self.tokenizer.encode(text, add_special_tokens=specials)
        ids, tokens = list(enc.ids), list(enc.tokens)
        if self.config.causal:
            tokens = [text[a:b].strip() or ("␣" if text[a:b] else tok) for tok, (a, b) in zip(tokens, enc.offsets)]
        unk = self.tokenizer.token_to_id("[UNK]")
        for i, (tid, (a, b)) in enumerate(zip(ids, enc.offsets)):
            if tid == unk and b > a:  # show what the model could not read, not just [UNK]
                tokens[i] = f"[UNK:{text[a:b]}]"
        return ids, tokens
