"""Which sentence shows best what learning changes (the lesson's step 6): measured, not guessed.

    .venv/bin/python docs/choose_lesson_sentence.py [transformer-mini macaron-mini]

For every candidate sentence with one [MASK] and the word it stands for, at every stage of each
model's training (macaron.milestones): the model's top-5 guesses, the rank of that word among all
tokens and its log-probability. The sentence chosen is the one whose word the final weights rank
highest (ties: the largest gain in log-probability since the plateau), averaged over the models.
"""
from __future__ import annotations

import sys

import numpy as np
import torch

from macaron import learning
from macaron.analysis import MASK_TOKEN

CANDIDATES = {
    "the capital of france is [MASK] .": "paris",
    "i went to the bank to deposit my [MASK] .": "money",
    "he opened the [MASK] and walked in .": "door",
    "she drank a cup of [MASK] .": "tea",
    "the sun rises in the [MASK] .": "east",
    "the children went to [MASK] in the morning .": "school",
    "one , two , three , [MASK] .": "four",
    "the keys to the old cabinet [MASK] on the table .": "are",
    "the cat sat on the [MASK] .": "mat",
}


def answer_at(model, text: str, answer: str) -> tuple[int, float, list[str]]:
    """(rank of `answer` at the [MASK], 1 = top; its log-probability; the top-5 guesses)."""
    ids, tokens, _ = model.tokenize(text)
    want = model.tokenizer.token_to_id(answer)
    if want is None:
        raise SystemExit(f"{answer!r} is not one token of this tokenizer")
    with torch.no_grad():
        logp = torch.log_softmax(model.mlm_logits(ids)[tokens.index(MASK_TOKEN)].float(), -1)
    top = logp.topk(5).indices.tolist()
    return int((logp > logp[want]).sum()) + 1, float(logp[want]), [model.tokenizer.id_to_token(i) for i in top]


def main(names: list[str]) -> None:
    score: dict[str, list[tuple[int, float]]] = {text: [] for text in CANDIDATES}
    for name in names:
        models = list(learning.at_stages(name))
        print(f"\n{name}: " + " | ".join(m.milestone.name for m in models))
        if not any(m.milestone.name == "plateau" for m in models):
            print("  (no plateau among its stages: gains are counted from its first stage)")
        for text, answer in CANDIDATES.items():
            row = [(m.milestone.name, *answer_at(m, text, answer)) for m in models]
            print(f"  {text}  ({answer})")
            for stage, rank, logp, top in row:
                print(f"    {stage:>13}: rank {rank:>5}  log p {logp:6.2f}  top-5 {' '.join(top)}")
            plateau = next((r for r in row if r[0] == "plateau"), row[0])
            score[text].append((row[-1][1], row[-1][2] - plateau[2]))
    best = min(score, key=lambda t: (np.mean([r for r, _ in score[t]]), -np.mean([g for _, g in score[t]])))
    print(f"\nchosen: {best!r} (final rank {[r for r, _ in score[best]]}, "
          f"log-probability gain since the plateau {[round(g, 2) for _, g in score[best]]})")


if __name__ == "__main__":
    main(sys.argv[1:] or ["transformer-mini", "macaron-mini"])
