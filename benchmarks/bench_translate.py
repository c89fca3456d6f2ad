"""Translating one sentence on the CPU, every sub-step of both particle systems recorded: a random WMT-base-shaped
Macaron (6 + 6 layers × 512, 8 heads, two half-FFNs of 1024 = FFN 2048 a layer) by fairseq's search, and a random
Marian of the same shape (post-LN Transformer, FFN 2048) beside transformers' generate on the same sentence in the
same run, greedy and beam 5.

  ours (translate: search, then both systems traced) / transformers' generate (Marian)     target ≤ 1.1

Both searches read the decoder incrementally (a key–value cache: one new word's work a step).

A 20-token source; the translation's length is held at --words words and </s> (the Marian's by its generation config's
min_length, in transformers' search and ours alike; the Macaron's by a zero embedding row for </s>, so that its tied
head never ranks </s> high and fairseq's search runs to max_tokens). The table says the lengths reached.
Runs interleaved, medians reported. Writes the "Translating a sentence" section of benchmarks/RESULTS.md (not with
--no-write; --smoke: a tiny shape, printed only, to check the script).
Usage: python benchmarks/bench_translate.py [--repeats 10] [--words 20] [--smoke]
"""
from __future__ import annotations

import argparse
import io
import json
import tempfile
from datetime import date
from pathlib import Path

import torch

import macaron
from macaron import ModelConfig
from macaron.train.card import hardware
from macaron.translation.model import TranslationConfig, build
from results import median_ms, write_section

SOURCE_TOKENS = 20
LINES = ["the house is small .", "das haus ist klein .", "the children play in the garden .",
         "die kinder spielen im garten ."]


def macaron_model(layers: int, d: int, heads: int, ffn: int, vocab: int):
    """A random pre-LN Macaron encoder–decoder of the paper's WMT14 base shape (fairseq's ids and search)."""
    torch.manual_seed(0)
    common = dict(scheme="macaron", norm="pre", d_model=d, n_layers=layers, n_heads=heads, ffn_total=ffn,
                  dropout=0.0, vocab_size=vocab, max_len=256, mlm_head=False, pad_id=1, embedding_scale=d ** 0.5)
    config = TranslationConfig(ModelConfig(**common, name="macaron (encoder)"),
                               ModelConfig(**common, causal=True, cross_attention=True, lm_head=True,
                                           name="macaron (decoder)"),
                               shared_embeddings=True, name="random WMT-base Macaron")
    model = build(config)
    with torch.no_grad():
        model.encoder.token_embedding.weight[2] = 0  # </s>: no word after which it is likely
    return model


def marian_folder(folder: Path, layers: int, d: int, heads: int, ffn: int, vocab: int, words: int):
    """A random Marian folder of the same shape as transformers saves one, with a small SentencePiece reading (the
    ids, not the text, are what is timed), and transformers' model."""
    import sentencepiece as spm
    import transformers

    folder.mkdir()
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(LINES * 4), model_writer=model, vocab_size=30,
                                   hard_vocab_limit=False, minloglevel=2, num_threads=1)
    for side in ("source", "target"):
        (folder / f"{side}.spm").write_bytes(model.getvalue())
    (folder / "vocab.json").write_text(json.dumps({"</s>": 0, "<unk>": 1, "<pad>": vocab - 1}))
    (folder / "tokenizer_config.json").write_text(json.dumps({"source_lang": "de", "target_lang": "en"}))
    config = transformers.MarianConfig(
        vocab_size=vocab, d_model=d, encoder_layers=layers, decoder_layers=layers, encoder_attention_heads=heads,
        decoder_attention_heads=heads, encoder_ffn_dim=ffn, decoder_ffn_dim=ffn, max_position_embeddings=512,
        activation_function="swish", scale_embedding=True, pad_token_id=vocab - 1, decoder_start_token_id=vocab - 1,
        eos_token_id=0, forced_eos_token_id=0)
    torch.manual_seed(0)
    theirs = transformers.MarianMTModel(config).eval()
    theirs.save_pretrained(folder)
    generation = {"bad_words_ids": [[vocab - 1]], "decoder_start_token_id": vocab - 1, "eos_token_id": 0,
                  "forced_eos_token_id": 0, "max_length": 512, "num_beams": 4, "pad_token_id": vocab - 1,
                  "renormalize_logits": True, "min_length": words + 1}  # no </s> before `words` words
    (folder / "generation_config.json").write_text(json.dumps(generation))
    return transformers.MarianMTModel.from_pretrained(folder).eval()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--words", type=int, default=20, help="the translation's length, held fixed")
    ap.add_argument("--smoke", action="store_true", help="a tiny shape (2 layers × 32), printed only")
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args()
    import transformers
    transformers.logging.set_verbosity_error()  # its note on max_new_tokens beside the config's max_length
    layers, d, heads, ffn, vocab = (2, 32, 4, 64, 100) if args.smoke else (6, 512, 8, 2048, 32000)
    ours_macaron = macaron_model(layers, d, heads, ffn, vocab)
    g = torch.Generator().manual_seed(1)
    with tempfile.TemporaryDirectory() as tmp:
        theirs = marian_folder(Path(tmp) / "marian", layers, d, heads, ffn, vocab, args.words)
        ours_marian = macaron.load(Path(tmp) / "marian", device="cpu")
    marian_ids = torch.randint(2, vocab - 1, (SOURCE_TOKENS - 1,), generator=g).tolist() + [0]
    fairseq_ids = torch.randint(4, vocab, (SOURCE_TOKENS - 1,), generator=g).tolist() + [2]

    def generate(beam):
        with torch.no_grad():
            return theirs.generate(torch.tensor([marian_ids]), num_beams=beam, max_new_tokens=args.words + 1)

    for beam in (1, 5):  # the same search: the same words
        assert ours_marian.translate(marian_ids, beam=beam, max_tokens=args.words).target_ids == \
            generate(beam)[0, 1:].tolist(), f"beam {beam}: ours and transformers' differ"
    runs = {}
    for beam in (1, 5):
        runs[f"marian ours {beam}"] = lambda b=beam: ours_marian.translate(marian_ids, beam=b, max_tokens=args.words)
        runs[f"marian generate {beam}"] = lambda b=beam: generate(b)
        runs[f"macaron ours {beam}"] = lambda b=beam: ours_macaron.translate(fairseq_ids, beam=b,
                                                                             max_tokens=args.words)
    ms = median_ms(runs, args.repeats)
    words = {beam: (len(runs[f"macaron ours {beam}"]().target_ids) - 1, len(runs[f"marian ours {beam}"]().target_ids)
                    - 1) for beam in (1, 5)}
    rows = "\n".join(f"| {'greedy' if beam == 1 else f'beam {beam}'} | {words[beam][0]}, {words[beam][1]} | "
                     f"{ms[f'macaron ours {beam}']:.0f} | {ms[f'marian ours {beam}']:.0f} | "
                     f"{ms[f'marian generate {beam}']:.0f} | "
                     f"{ms[f'marian ours {beam}'] / ms[f'marian generate {beam}']:.2f} |" for beam in (1, 5))
    worst = max(ms[f"marian ours {beam}"] / ms[f"marian generate {beam}"] for beam in (1, 5))
    body = (f"{date.today()}, {hardware()}, {torch.get_num_threads()} threads, torch {torch.__version__}, median of "
            f"{args.repeats}; random weights, {layers} + {layers} layers × {d}, {heads} heads, FFN {ffn} a layer, "
            f"{vocab:,} tokens; a {SOURCE_TOKENS}-token source, translations of {args.words} words and </s>. Ours: "
            f"`translate` (the search, reading the decoder one new word a step by its key–value cache, then both "
            f"systems traced, every sub-step recorded); transformers': `generate` (its KV cache, nothing "
            f"recorded).\n\n"
            f"| search | words (Macaron, Marian) | Macaron, ours ms | Marian, ours ms | Marian, generate ms | "
            f"ours / generate (≤ 1.1) |\n|---|---|---|---|---|---|\n{rows}\n\n"
            f"Target {'met' if worst <= 1.1 else 'missed'}: at most {worst:.2f} × generate's time.")
    print(body)
    if not (args.no_write or args.smoke):
        write_section("Translating a sentence", body)


if __name__ == "__main__":
    main()
