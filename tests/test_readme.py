"""The documentation's library examples (the first-trace guide, docs/howto/library.md, and the schemes' registry,
docs/results/schemes.md) run as written, on the shipped models, and print what their comments say."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import plotly.graph_objects as go

import macaron

ROOT = Path(__file__).resolve().parent.parent
CLAIM = re.compile(r"^(?P<expr>[^#]+?)\s+#\s*(?P<claim>\([\d ,+]+\)|'[^']*')")  # `expr  # (shape)` or `# 'text'`


def python_blocks(page: str) -> list[str]:
    """The ```python blocks of a page of the site (a path under docs/), in order."""
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_library_examples_run_and_say_what_they_print(monkeypatch):
    shown = []
    monkeypatch.setattr(go.Figure, "show", lambda fig, *a, **k: shown.append(fig))
    blocks = python_blocks("howto/library.md")
    namespace: dict = {}
    claims = 0
    for block in blocks[:3]:  # one session: each block goes on from the one before
        exec(compile(block, "docs/howto/library.md", "exec"), namespace)
        for line in block.splitlines():
            if m := CLAIM.match(line):
                value = eval(m["expr"], namespace)
                said = ast.literal_eval(m["claim"]) if m["claim"].startswith("'") else eval(m["claim"])
                assert (value if isinstance(value, str | tuple) else value.shape) == said, line
                claims += 1
    assert claims == 5 and len(shown) == 4  # the shapes, the label, the kind; learning, particles twice, compare drawn
    assert namespace["traj_a"].tokens == namespace["traj_b"].tokens
    assert any(t.name == "focus" for t in shown[2].data)  # bank ringed


def test_the_scheme_registry_is_as_the_documentation_writes_it():
    namespace: dict = {"Sub": macaron.Sub}
    exec(python_blocks("results/schemes.md")[0], namespace)
    assert namespace["LIE_TROTTER"] == macaron.LIE_TROTTER and namespace["STRANG"] == macaron.STRANG


def test_what_the_readme_says_of_the_translation_race_is_what_the_stored_runs_say():
    """The front door's sentence is typed, so it is held against the stored seeds as the site and the lesson state
    them (translation_race.gist): "not yet told apart from zero" while Macaron − Transformer in test BLEU is not shown
    (its 95 % interval over seeds holds 0), "lies above zero" while it is above, "in BLEU the split FFN, not the
    order" while the control's gain over the Transformer is shown in BLEU and Macaron's over the control is not."""
    from macaron.studies import translation_race as bleu_race
    from macaron.studies import zoo

    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    gist = bleu_race.gist(zoo.runs(task="translation"))
    assert ("not yet told apart from zero" in readme) == ("test BLEU [" in gist and ", not shown (" in gist), gist
    assert ("interval over the seeds lies above zero" in readme) == (", Macaron the better (" in gist), gist
    assert ("in BLEU the split FFN, not the order" in readme) == (": the split FFN, not the order" in gist), gist
    seeds = len({r.seed for r in zoo.runs(task="translation")})
    words = {3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}
    assert f"story ({words.get(seeds, seeds)} seeds)" in readme, f"the README names another count than {seeds} seeds"
