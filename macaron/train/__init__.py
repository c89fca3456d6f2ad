"""Training the shipped models: the one trainer (`trainer`) and its two tasks (`pretrain`: the masked LM; `translate`:
the translators), their data (`corpus`, `tokenizer`, `pack`, `tatoeba`), evaluation, cards and publishing."""
