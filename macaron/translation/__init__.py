"""Translation as two particle systems: the encoder–decoder and its searches (the paper's BLEU rows: studies.bleu).
"""
# fairseq's Dictionary's special ids (0 kept free "for consistency with Lua"): the paper's models, ours and the
# searches read them; Marian's models name their own in their config (TranslationConfig's ids)
PAD, EOS, UNK = 1, 2, 3
