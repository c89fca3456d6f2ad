"""Models from elsewhere, one module a format: our folder (folder, ours), the Hugging Face encoders and decoders,
Marian's translation models, the paper's fairseq checkpoints and their reading of text (moses_bpe); the registry
reads them all.
"""
