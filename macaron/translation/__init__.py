"""Translation as two particle systems: the encoder–decoder, its searches, BLEU.
"""
