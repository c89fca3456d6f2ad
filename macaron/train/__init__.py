"""Pre-training support: corpus builder (`corpus`) and tokenizer trainer (`tokenizer`)."""
