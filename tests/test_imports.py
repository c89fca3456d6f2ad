"""The library's import graph has no cycles, counting imports inside functions (an import there hides a
cycle from Python but not from a reader), and no test reaches into benchmarks/."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def modules(package: Path) -> dict[str, Path]:
    """Dotted name -> file of every module of a package (a package by its __init__.py)."""
    out = {}
    for file in package.rglob("*.py"):
        parts = list(file.relative_to(package.parent).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = file
    return out


def import_graph(package: Path) -> dict[str, set[str]]:
    """module -> the package's modules it imports anywhere in its file, and the packages whose __init__ that runs."""
    mods = modules(package)

    def known(name: str) -> str | None:  # the longest prefix of a dotted name that is one of the modules
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph = {m: set() for m in mods}
    for m, file in mods.items():
        here = m if file.name == "__init__.py" else m.rpartition(".")[0]
        for node in ast.walk(ast.parse(file.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for name in names:
                target = known(name)
                if target is None or target == m:
                    continue
                graph[m].add(target)
                parts = target.split(".")  # importing it runs each package above it that is not above m
                graph[m].update(p for p in (".".join(parts[:k]) for k in range(1, len(parts)))
                                if p in mods and not (m == p or m.startswith(p + ".")))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_the_library_has_no_import_cycles():
    graph = import_graph(ROOT / "macaron")
    loading = graph["macaron.sources.loading"]
    assert "macaron.formats.registry" in loading  # the graph is read
    assert cycles(graph) == []
    # the loader sits above the pieces it joins: the formats' registry, the stages of training, the networks; the
    # folder format knows nothing of them: only the paper's reading (formats.moses_bpe)
    assert {"macaron.formats.registry", "macaron.sources.milestones", "macaron.network.model"} <= loading
    assert graph["macaron.formats.folder"] == {"macaron.formats.moses_bpe"}
    assert graph["macaron.formats.moses_bpe"] == {"macaron.trajectory", "macaron.translation"}  # fairseq's special ids
    assert "macaron.train.card" not in graph["macaron.train.data"] | graph["macaron.train.pack"]


# ---- layers: docs/architecture.md's table, an import only reaching the rows above its own ---------------------------
def layers() -> list[set[str]]:
    """The rows of docs/architecture.md's table of the library, first to last: each row's top-level modules and
    packages, as `unit` names them."""
    rows = []
    for line in (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines():
        cells = line.split("|")
        if len(cells) > 2 and "`" in cells[1]:
            rows.append({name.strip("`").removesuffix(".py").rstrip("/") for name in re.findall(r"`[^`]+`", cells[1])})
    return rows


def unit(module: str) -> str:
    """A module's top-level module or package: macaron.network.model -> network, macaron -> __init__."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_import_between_packages_points_up_the_architectures_table():
    """Package by package, lazy imports counted: a package imports only the ones listed above it (or in its own
    row), so each can be read, tested and replaced knowing only what is above it. A package's own ancestors are
    not counted (`from .. import lesson` runs macaron/__init__.py, as every import of the library does)."""
    rows = layers()
    row = {name: i for i, names in enumerate(rows) for name in names}
    graph = import_graph(ROOT / "macaron")
    assert {unit(m) for m in graph} <= set(row), "a package missing from docs/architecture.md's table"
    upward = sorted(f"{m} -> {t} ({unit(m)} is in row {row[unit(m)] + 1}, {unit(t)} in row {row[unit(t)] + 1})"
                    for m, targets in graph.items() for t in targets
                    if not m.startswith(t + ".") and row[unit(t)] > row[unit(m)])
    assert upward == []


def test_the_layering_check_sees_an_upward_import():
    rows = layers()
    assert rows[0] >= {"schemes", "config", "trajectory"} and {"__init__", "__main__"} <= rows[-1]
    row = {name: i for i, names in enumerate(rows) for name in names}
    assert row[unit("macaron.network.model")] < row[unit("macaron.formats.folder")]  # so a save here would be caught


# ---- the house rules of issue 70: a layout that shows the architecture ----------------------------------------------
MAPPINGS = {"macaron.formats.encoders", "macaron.formats.decoders", "macaron.formats.marian", "macaron.formats.fairseq",
            "macaron.formats.fairseq_import", "macaron.formats.ours"}


def python_files(*folders: str) -> list[Path]:
    return sorted(f for folder in folders for f in (ROOT / folder).rglob("*.py"))


def test_the_package_has_few_top_level_modules():
    top = [p.name for p in (ROOT / "macaron").iterdir() if p.suffix == ".py" or (p / "__init__.py").is_file()]
    assert 10 <= len(top) <= 16, sorted(top)


def test_no_module_class_or_function_is_too_long_to_read_at_once():
    long = []
    for file in python_files("macaron", "app"):
        text = file.read_text()
        if len(text.splitlines()) > 600:
            long.append(f"{file.relative_to(ROOT)}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            limit = {ast.ClassDef: 250, ast.FunctionDef: 120, ast.AsyncFunctionDef: 120}.get(type(node))
            if limit and node.end_lineno - node.lineno + 1 > limit:
                long.append(f"{file.relative_to(ROOT)}: {node.name}, {node.end_lineno - node.lineno + 1} lines")
    assert long == []


def test_no_private_name_crosses_a_module():
    crossing = []
    for file in python_files("macaron", "app", "benchmarks", "tools"):
        for node in ast.walk(ast.parse(file.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("macaron")):
                crossing += [f"{file.relative_to(ROOT)}: {a.name}" for a in node.names
                             if a.name.startswith("_") and not a.name.startswith("__")]
    assert crossing == []


def test_the_hub_download_names_no_family():
    """The Hub's module reads the registry of formats; no module that maps a family's weights."""
    graph = import_graph(ROOT / "macaron")
    assert "macaron.formats.registry" in graph["macaron.sources.hub"]
    assert graph["macaron.sources.hub"] & MAPPINGS == set()
    assert MAPPINGS - {"macaron.formats.fairseq", "macaron.formats.fairseq_import"} <= graph["macaron.formats.registry"]


def test_a_cycle_is_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_test_imports_the_benchmarks():
    """The served app and its sessions live in tools/served.py, for the tests and the benchmarks alike."""
    for file in (ROOT / "tests").glob("*.py"):
        if file.name == Path(__file__).name:
            continue
        tree = ast.parse(file.read_text())
        imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        imported += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert not [name for name in imported if name.startswith(("bench_", "results", "benchmarks"))], file.name
        assert "benchmarks" not in [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)], file.name
