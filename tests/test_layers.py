"""The layers, read from the source's imports (function-local ones too): the
vocabulary at the bottom imports nothing of kraftwalk's but itself, and no Numba;
the kernels import only themselves and the vocabulary; and no module imports,
directly or through others, one that imports it back."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _modules() -> dict[str, Path]:
    """kraftwalk's modules by import name (kernels/ is installed as kraftwalk.kernels)."""
    mods = {}
    for path in sorted((ROOT / "kraftwalk").rglob("*.py")):
        mods[".".join(path.relative_to(ROOT).with_suffix("").parts)] = path
    for path in sorted((ROOT / "kernels").glob("*.py")):
        mods["kraftwalk.kernels." + path.stem] = path
    return {m.removesuffix(".__init__"): p for m, p in mods.items()}


MODULES = _modules()


def _imports(name: str) -> set[str]:
    """Every module ``name`` imports anywhere in it (absolute names)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            subs = {f"{base}.{a.name}" for a in node.names} & MODULES.keys()
            out.update(subs or {base})  # `from pkg import submodule` needs the submodule
    return out - {name}


GRAPH = {m: {d for d in _imports(m) if d in MODULES} for m in MODULES}


def test_the_vocabulary_imports_only_itself_and_the_standard_library():
    for m in MODULES:
        if m.startswith("kraftwalk.vocabulary"):
            for d in _imports(m):
                top = d.split(".")[0]
                assert d.startswith("kraftwalk.vocabulary") or top in (
                    "__future__", "dataclasses"), f"{m} imports {d}"


def test_the_kernels_import_only_themselves_and_the_vocabulary():
    for m in MODULES:
        if m.startswith("kraftwalk.kernels"):
            for d in GRAPH[m]:
                assert d.startswith(("kraftwalk.kernels", "kraftwalk.vocabulary")), \
                    f"{m} imports {d}"


def test_no_import_cycles():
    """Tarjan's strongly connected components of the import graph: each must be one
    module."""
    index, low, stack, on, cycles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                cycles.append(sorted(part))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert not cycles, cycles
