"""The guided lesson: eight steps, each a view of the explorer with one sentence of explanation and a note
for the teacher. The app (its sidebar's *Guided lesson*, `?lesson=k`) and the lesson file
(`python -m macaron lesson --out lesson.html`, macaron.plot.lesson) read these same steps, so they
cannot drift apart.

A step's `view` holds the app's URL parameters of that view; "{transformer}" and "{macaron}" stand for
the models the lesson is given (the default pair, or the pair among the models that ship their stages
of training where a step asks for a stage); the translation step names the shipped translator (TRANSLATOR).
A view with `if` opens the page's What if… panel (`if=off&if_kind=diffusion`: diffusion off; `if_layers` empty:
in every layer); every other view opens it with nothing chosen (params).
`print_at` is the frame the printed handout shows: a frame index of a Particles, Translate or Splitting-lab
animation ("last": its last one), or a layer time on Compare.
"""
from __future__ import annotations

from typing import NamedTuple

# Sentences chosen to teach: two senses of "bank", masked words to guess, a long one. The app's preset
# menu lists them; the lesson's steps name them.
PRESETS = {
    "born in new [MASK]": "he was born in new [MASK] .",
    "bank (river)": "i sat on the bank of the river and watched the water .",
    "bank (money)": "i went to the bank to deposit my money .",
    "capital [MASK]": "the capital of france is [MASK] .",
    "cat [MASK]": "the cat sat on the [MASK] .",
    "agreement [MASK]": "the keys to the old cabinet [MASK] on the table .",
    "school [MASK]": "the children went to [MASK] in the morning .",
    "long sentence (30 tokens)": ("after the long meeting , the tired engineers walked slowly to the small cafe "
                                  "near the old station and ordered coffee , tea and two slices of cake ."),
}
# The sentence the app opens with, chosen by measurement (tools/choose_lesson_sentence.py --opening): among
# 22 candidates with one [MASK], those whose word is the top guess of both default models (the 6 × 512
# pair) and, of those, the one whose word they give the highest probability (york: 0.78 and 0.75). Both
# models already guess york after layer 1's attention, the second sub-step of the animation.
DEFAULT_SENTENCE = PRESETS["born in new [MASK]"]

# What the shipped models know, in one honest sentence (measured: docs/results/models.md, "What they guess").
WHAT_THEY_KNOW = (
    "These are small models (6 layers, trained for 3.6–6.3 hours on a 2-core CPU; 40–43 % of held-out masked "
    "words right): they often guess the right kind of word rather than the word. \"the capital of france is "
    "[MASK] .\" gets located, founded, established from the 6 × 512 pair, not paris.")


# The pair whose layers are small steps of one flow (ModelConfig.shared/step/tied_halves): where step 4's
# claim is measured on trained networks (macaron.studies.orders; the Splitting lab's section 3e).
ODE_PAIR = ("transformer-ode", "macaron-ode")

# The full-size pair (`make full-size`): BERT-base from the Hugging Face Hub and the paper's own Macaron-base (both
# 12 layers × 768), each under the names it may be listed by. A step that names a Transformer and a Macaron opens
# it where both are on offer (full_size), else the shipped pair.
FULL_SIZE = (("bert-base-uncased", "google-bert/bert-base-uncased"), ("paper-macaron-bert-base",))


# The translator step 7 opens (trained here and shipped: docs/howto/train.md), on a sentence whose word has two senses
# (banco: a bench here, a bank in "Llevé el dinero al banco."), at layer 1's cross-attention in the decoder (frame 12
# of its 3 + 3 Macaron layers: the embedding, 3 × 3 encoder sub-steps, then ½ FFN, attention, cross-attention).
TRANSLATOR = "macaron-es-en"
TRANSLATION_SENTENCE = "Me senté en el banco del parque."


class LessonStep(NamedTuple):
    title: str
    page: str      # the app's page file, as st.navigation knows it
    view: dict     # its URL parameters (the model names are filled in when the step is opened)
    say: str       # one sentence of explanation, shown above the view
    note: str      # for the teacher: what to do, what to say, under which conditions it holds
    print_at: int | float | str  # the handout's frame: a frame index, "last", or a layer time (Compare)
    print_why: str  # why that frame shows the step's point
    more: str = ""  # the figures behind the class's sentence (an ⓘ in the app, a small line in the lesson file)


LESSON = (
    LessonStep(
        "What a particle is", "views/particles.py",
        dict(s=PRESETS["bank (river)"], m="{transformer}", at="final", frame="0", norm="1", trail="4", focus=""),
        "Each dot is one token of the sentence, a particle; where it sits is the model's state for that "
        "token, drawn along the two directions in which the states vary most. Press ▶ Play.",
        "Press ▶ Play once before saying anything: the title names every sub-step as it comes, and the "
        "slider under the plot goes back to any of them. One PCA fitted on all the states draws every frame, so "
        "motion on screen is motion of the states. The plane holds a small share of the embedding's spread "
        "(the caption under the figure says how much for this model), a larger one of later states': "
        "the layers gather the particles' differences into the two directions drawn.",
        "last", "the last state, after every layer: where the layers have taken each token"),
    LessonStep(
        "A diffusion step", "views/particles.py",
        dict(s=PRESETS["bank (river)"], m="{transformer}", at="final", frame="1", norm="1", trail="0", focus="bank"),
        "Attention moves each particle because of the others: blue arrows are the moves, dotted lines point to whom "
        "each listens most, and above the plot: whom the ringed bank listened to, in per cent.",
        "Each row of the matrix is one particle's attention and sums to 100 %. Attention moves each particle "
        "by a weighted mean of the others' values: that always holds. \"Diffusion pulls the particles "
        "together\" holds for the view drawn here (each token standardised, what the operators read), not "
        "for the raw residual stream: on the shipped models (318 sentences) every attention sub-step shrinks "
        "the particles' spread as the operators read them and widens it in the raw states (all but 1 % of "
        "macaron-small's; Splitting lab, section 3d).",
        1, "layer 1's attention: the blue moves and the matrix of who listens to whom"),
    LessonStep(
        "A convection step", "views/particles.py",
        dict(s=PRESETS["bank (river)"], m="{transformer}", at="final", frame="2", norm="1", trail="0", focus="bank"),
        "The FFN moves each particle on its own: the same function for every token, reading only that "
        "token's state, so its mixing matrix is the identity.",
        "Contrast with step 2: the arrows are vermillion and the matrix is the diagonal. The FFN reads one "
        "token at a time, so two tokens with the same state would move the same way. It need not push "
        "particles apart.",
        2, "layer 1's FFN: vermillion moves and the identity matrix"),
    LessonStep(
        "Lie–Trotter vs Strang", "views/lab.py",
        dict(sys="linear", sub="exact", beta="1", np="24", T="1", steps="8", mag="10",
             show="lie-trotter,strang,unsplit", a=ODE_PAIR[0], b=ODE_PAIR[1]),
        "A toy whose exact motion is known (F: attention, G: the FFN, h: the step). Sub-steps solved exactly, one G "
        "in both halves: Strang's one-step error is O(h³), Lie–Trotter's O(h²); one Euler step each, as a layer "
        "takes: both O(h²). Trained models: step 5.",
        "A Transformer layer runs the Lie–Trotter order (attention, then FFN), a Macaron layer the "
        "Strang–Marchuk order (½ FFN, attention, ½ FFN). The errors are drawn ×10 in the plane; the chart "
        "beside it gives their true size. Say the conditions with the claim: the ODE pair (one shared layer, "
        "steps h = 0.5, post-LN without gain or bias, Macaron's halves one FFN) meets them, and its measured "
        "slopes are close to the theorem's (the lab's section 3e); the other shipped models do not (a layer of "
        "their own at every depth, LayerNorm gains, two half-FFNs). A network takes one Euler step per "
        "sub-step, O(h²) locally in either order: there Strang can win only by a smaller error.",
        "last", "the end of the run, t = 1: the errors each scheme has gathered"),
    LessonStep(
        "Transformer vs Macaron", "views/compare.py",
        dict(mode="models", s=PRESETS["bank (river)"], a="{transformer}", b="{macaron}", at_a="final",
             at_b="final", norm="1"),
        "Transformer vs Macaron (½ FFN, attention, ½ FFN), one clock: ▶ Play. {race}",
        "One layer clock for both: ½ + ½ (Transformer) and ¼ + ½ + ¼ (Macaron) are shares of layer time, not "
        "step sizes; each half-FFN runs at fraction ½ of the step. Each panel has its own PCA: two models' "
        "coordinates are unrelated. In the app, *Overlaid after Procrustes* puts B onto A with one "
        "rotation (residual 0 for the same shape). {race} {translation}",
        1.0, "t = 1, the end of layer 1: the Transformer has taken two sub-steps, Macaron three"),
    LessonStep(
        "What learning changes", "views/particles.py",
        dict(s=PRESETS["school [MASK]"], m="{transformer}", at="plateau", frame="0", norm="1", trail="4", focus=""),
        "At the plateau the model guesses the same few words whatever the sentence (its guess for [MASK] in the "
        "title, more below). Move the stage to rise, then final, and Play each time: once it reads word order, it "
        "guesses school.",
        "The stages: the random start; the plateau, the last evaluation before the model reads word order "
        "(context effect below 0.05 nats: it reads which words are around, not their order); the rise, the "
        "first with half of its final context effect; the final weights. One PCA fitted on the sentence at "
        "every stage draws them all, so its directions do not flip between stages; each stage is drawn at its own "
        "scale (the trained cloud is far smaller than the random start's). The guesses under each stage "
        "are the model's own top 5 for [MASK] (its last state through its output head).",
        "last", "the last state, at the plateau and with the final weights: the guesses change, the directions stay"),
    LessonStep(
        "Two particle systems", "views/translate.py",
        dict(src=TRANSLATION_SENTENCE, m=TRANSLATOR, beam="5", frame="12", norm="1", hide="1", trail="0", focus="the"),
        "The encoder moves the Spanish particles (●), then the decoder the English ones (◆). In cross-attention "
        "(purple) the source stays put and pulls each English particle: an external field. Above the plot: whom the "
        "ringed \"the\" (it writes bench) listened to.",
        "Derived, so true of every encoder–decoder: cross-attention's keys and values are the encoder's last states, "
        "which no decoder sub-step changes, so for the translation's particles they are a field that depends on where "
        "each particle is, never a force it exerts back. Each translation particle writes the word after it. On the "
        "shipped translator the ringed \"the\" that writes bench listens most to banco in layers 1 and 2 (the line "
        "above the plot, and its dotted arrow); type \"Llevé el dinero al banco.\" and the \"the\" that writes bank "
        "listens most to banco too: one source word, read "
        "as bench or as bank from the rest of the sentence, which the encoder has mixed into banco's particle. "
        "{translation}",
        12, "the decoder's first cross-attention: the source still, the translation pulled toward it"),
    LessonStep(
        "Switch off the interaction", "views/particles.py",
        {**dict(s=PRESETS["born in new [MASK]"], m="{transformer}", at="final", frame="0", norm="1", trail="4",
                focus=""),
         "if": "off", "if_kind": "diffusion", "if_layers": ""},  # "": every layer, whatever the app kept
        "Attention off in every layer: each particle moves alone, from its own token and position, away from its "
        "hollow grey ghost (the run as trained). Above the plot: the guess for [MASK] before → after.",
        # every number and quoted output measured with macaron.interventions on the shipped models, held by
        # tests/test_lesson.py (test_step_8_says_what_the_library_measures)
        "Measured on the shipped models, \"he was born in new [MASK] .\", diffusion off in every layer (each "
        "attention sub-step moves no particle; the FFNs and their LayerNorms as trained), the model's own top guess "
        "for [MASK] from its last state: transformer-small york 78 % → [PAD] 2 %, macaron-small york 75 % → \"the\" "
        "5 %. Derived, so true of every model: with diffusion off only the FFNs and LayerNorms move a particle, and "
        "they read one token at a time, so the [MASK]'s path depends only on its token and its position, and every "
        "sentence with [MASK] at the same place gets the same answer: type \"the cat sat on the [MASK] .\" "
        "([MASK] the 6th word again) and transformer-small guesses [PAD] 2 % again. On the translator "
        f"({TRANSLATOR}, Translate, What if… switch a sub-step off, external field (cross-attention), every layer, "
        "beam 5) the decoder never reads the source (nor does its search's length limit), so every source gets one "
        "same translation: \"Me senté en el banco del parque.\" and \"Llevé el dinero al banco.\" both become "
        "\"It's been to the same way that I among them.\"",
        "last", "the last state, where the answer is read: each particle (●) at the end of its lone path, its "
        "ghost (○) where attention took it",
        "On transformer-small the guess for [MASK] goes from york (78 %) to [PAD], the padding token (2 %)."),
)


def step(k: int) -> LessonStep:
    """Step k (1-based), with what the race found where its text says {race} (the masked LM's) or {translation} (the
    translators'), read from pretrained/race when the step is built (macaron.studies.zoo and translation_race: one
    sentence with no figure for the class, its figures in `more`, every verdict for the teacher; the translators'
    gain beside the paper's)."""
    s = LESSON[k - 1]
    text = s.say + s.note
    if "{race}" not in text and "{translation}" not in text:
        return s
    from .formats.folder import CheckpointError
    from .studies import translation_race, zoo  # scipy and the stored runs: only for the steps that need them
    said = {}
    try:
        if "{race}" in text:
            race = zoo.runs()
            said["race"] = zoo.gist(race), zoo.findings(race)
            s = s._replace(more=zoo.finding(race))
    except CheckpointError as e:  # a damaged stored run costs the sentence, not the lesson
        said["race"] = (f"(The race's stored runs could not be read: {e}.)",) * 2
    try:
        if "{translation}" in text:
            said["translation"] = (translation_race.gist(zoo.runs(task="translation")),) * 2
    except CheckpointError as e:
        said["translation"] = (f"(The translators' stored runs could not be read: {e}.)",) * 2
    say, note = s.say, s.note
    for name, (for_class, for_teacher) in said.items():
        say, note = say.replace(f"{{{name}}}", for_class), note.replace(f"{{{name}}}", for_teacher)
    return s._replace(say=say, note=note.strip())


# The step that shows a model at its stages of training (its view's `at` other than "final"): the lesson file's learner.
STAGED = next(k for k, s in enumerate(LESSON, 1) if s.view.get("at", "final") != "final")


def full_size(k: int, names) -> tuple[str, str] | None:
    """(Transformer, Macaron) of the full-size pair among `names` where step k names both, else None."""
    named = " ".join(LESSON[k - 1].view.values())
    if "{transformer}" not in named or "{macaron}" not in named:
        return None
    a, b = (next((n for n in kind if n in names), None) for kind in FULL_SIZE)
    return (a, b) if a and b else None


def params(k: int, transformer: str, macaron: str) -> dict:
    """Step k's view (1-based) with its models filled in. A step without What if… says so (`if` empty): the app keeps
    a page's last choices, and a step opened after step 8 would otherwise open with its intervention."""
    view = {"if": "", **LESSON[k - 1].view}
    return {p: v.format(transformer=transformer or "", macaron=macaron or "") for p, v in view.items()}
