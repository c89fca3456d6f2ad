"""Which sentences the lesson uses, measured, not guessed.

    .venv/bin/python tools/choose_lesson_sentence.py [transformer-mini macaron-mini]
    .venv/bin/python tools/choose_lesson_sentence.py --opening [transformer-small macaron-small]

Step 6 (what learning changes): for every candidate sentence with one [MASK] and the word it stands
for, at every stage of each model's training (macaron.sources.milestones): the model's top-5 guesses, the rank
of that word among all tokens and its log-probability. The sentence chosen is the one whose word the
final weights rank highest (ties: the largest gain in log-probability since the plateau), averaged
over the models.

--opening (the sentence the app opens with): the same candidates and more, on the default pair's
final weights. Kept: the sentences whose word is every model's top guess. Chosen among them: the one
whose word gets the highest probability, averaged over the models. For it the script prints what
the particles show: the first sub-step from which the word stays the [MASK]'s top guess (logit lens)
and the word the [MASK] listens to most at every attention sub-step (the dotted arrow of the view).
"""
from __future__ import annotations

import sys

import numpy as np
import torch

from macaron.studies import learning
from macaron.studies.analysis import MASK_TOKEN

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
OPENING = {  # more candidates for the opening sentence; a "|" separates words that are all right
    **CANDIDATES, "she drank a cup of [MASK] .": "tea|coffee", "the cat sat on the [MASK] .": "mat|floor",
    "he was born in new [MASK] .": "york", "the united [MASK] of america": "states",
    "the first world [MASK] ended in 1918 .": "war", "she wrote a letter to her [MASK] .": "mother|father",
    "the boy and his [MASK] went to the park .": "father|mother", "the train arrived at the [MASK] .": "station",
    "he drank a glass of [MASK] .": "water|wine|milk", "the ship sailed across the [MASK] .": "sea|ocean",
    "the river flows into the [MASK] .": "sea|ocean", "in winter the ground is covered with [MASK] .": "snow",
    "the moon goes around the [MASK] .": "earth", "the king and the [MASK] lived in a castle .": "queen",
    "i sat on the bank of the [MASK] and watched the water .": "river",
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


def best_answer(model, text: str, answers: str) -> tuple[int, float, list[str]]:
    """answer_at for the best-ranked of the words in `answers` ('a|b')."""
    known = [a for a in answers.split("|") if model.tokenizer.token_to_id(a) is not None]
    return min((answer_at(model, text, a) for a in known), key=lambda r: r[0], default=(10**9, -np.inf, []))


def opening(names: list[str]) -> None:
    import macaron
    from macaron.studies.analysis import MASK_TOKEN as MASK

    models = [macaron.load(n, device="cpu") for n in names]
    kept = {}
    for text, answers in OPENING.items():
        rows = [best_answer(m, text, answers) for m in models]
        print(f"  {text}  ({answers}): " + " | ".join(f"rank {r} p {np.exp(lp):.2f} [{' '.join(top)}]"
                                                     for r, lp, top in rows))
        if all(r == 1 for r, _, _ in rows):
            kept[text] = float(np.mean([np.exp(lp) for _, lp, _ in rows]))
    print("\nevery model's top guess is right:", {t: round(p, 3) for t, p in kept.items()})
    best = max(kept, key=kept.get)
    print(f"chosen: {best!r} (mean probability of its word {kept[best]:.2f})")
    for name, model in zip(names, models):
        traj = model.trace(best)
        pos = traj.tokens.index(MASK)
        tops = [g[0][0] for g in model.logit_lens(traj, pos, k=1)]
        answer = tops[-1]
        first = next(k for k in range(len(tops)) if all(t == answer for t in tops[k:]))
        words = np.array([i != pos and t not in ("[CLS]", "[SEP]") for i, t in enumerate(traj.tokens)])
        pulls = [(traj.steps[k].label, traj.tokens[int(np.argmax(np.where(words, traj.mixing[k].mean(0)[pos], -1)))],
                  float(np.max(np.where(words, traj.mixing[k].mean(0)[pos], -1))))
                 for k in range(traj.n_steps) if traj.mixing[k] is not None]
        print(f"\n{name}: '{answer}' is the top guess from state {first} ({traj.labels[first]}) on")
        print("  the word [MASK] listens to most (mean over heads; [CLS], [SEP] and itself left out, as the view "
              "draws it): " + "; ".join(f"{label.split(' · ')[0]}: {tok} {w:.0%}" for label, tok, w in pulls))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--opening"]:
        opening(sys.argv[2:] or ["transformer-small", "macaron-small"])
    else:
        main(sys.argv[1:] or ["transformer-mini", "macaron-mini"])
