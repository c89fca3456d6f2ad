"""Train the uncased WordPiece tokenizer used for MLM pre-training.

BERT-style pipeline with HF `tokenizers`: BertNormalizer (clean text, lowercase,
strip accents), BertPreTokenizer, WordPiece model with `##` continuations, and a
`[CLS] $A [SEP]` post-processor. The special tokens are pinned to ids 0..4.

    python -m macaron.train.tokenizer --corpus data/corpus --out data/tokenizer.json --vocab 8192
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

from ..formats.folder import open_tokenizer
from .corpus import CorpusError, check_shard, corpus_files

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]   # ids 0..4, in this order
PAD_ID, UNK_ID, CLS_ID, SEP_ID, MASK_ID = range(5)


def new_tokenizer() -> Tokenizer:
    """An untrained tokenizer with the full BERT-uncased pipeline attached."""
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", continuing_subword_prefix="##"))
    tok.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=True, lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix="##")
    return tok


def _attach_post_processor(tok: Tokenizer) -> None:
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )


def check_special_tokens(tok: Tokenizer) -> None:
    """The model code relies on these ids; fail loudly if training moved them."""
    got = [tok.token_to_id(t) for t in SPECIAL_TOKENS]
    if got != list(range(len(SPECIAL_TOKENS))):
        raise ValueError(f"special tokens landed at ids {got}, expected 0..4 for {SPECIAL_TOKENS}")


def train_tokenizer(files: list[str], vocab_size: int = 8192, min_frequency: int = 2,
                    show_progress: bool = False) -> Tokenizer:
    """Train an uncased WordPiece tokenizer on plain-text files (one sentence/paragraph a line)."""
    if not files:
        raise CorpusError("train_tokenizer: no input files given")
    for f in files:
        check_shard(f)                              # clear error naming an empty/corrupt file
    tok = new_tokenizer()
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=SPECIAL_TOKENS,              # the trainer adds them first, in order
        continuing_subword_prefix="##",
        limit_alphabet=1000,                        # rare symbols become [UNK], not vocab slots
        show_progress=show_progress,
    )
    tok.train([str(f) for f in files], trainer)
    check_special_tokens(tok)
    _attach_post_processor(tok)
    return tok


def load_tokenizer(path: str | Path) -> Tokenizer:
    tok = open_tokenizer(Path(path), CorpusError)
    check_special_tokens(tok)
    return tok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m macaron.train.tokenizer", description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="data/corpus", help="corpus directory with train-*.txt shards")
    ap.add_argument("--out", default="data/tokenizer.json")
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--min-frequency", type=int, default=2)
    args = ap.parse_args(argv)
    t0 = time.time()
    try:
        files = corpus_files(args.corpus, "train")
        tok = train_tokenizer([str(f) for f in files], args.vocab, args.min_frequency, show_progress=True)
    except (CorpusError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tok.save(str(out))
    sample = "The particles interact, and the layers are time steps."
    enc = tok.encode(sample)
    print(f"vocab {tok.get_vocab_size()} trained on {len(files)} shard(s) in {time.time() - t0:.0f}s -> {out}")
    print(f"{sample!r} -> {enc.tokens}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
