"""The layers, read from the source's imports (function-local ones too): the
vocabulary at the bottom imports nothing of kraftwalk's but itself and the standard
library, so no Numba; the kernels import only themselves and the vocabulary; inside
each package a layer imports only the layers below it; and no module imports,
directly or through others, one that imports it back."""
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _modules() -> dict[str, Path]:
    """kraftwalk's modules by import name (kernels/ is installed as kraftwalk.kernels)."""
    mods = {}
    for path in sorted((ROOT / "kraftwalk").rglob("*.py")):
        mods[".".join(path.relative_to(ROOT).with_suffix("").parts)] = path
    for path in sorted((ROOT / "kernels").rglob("*.py")):
        mods[".".join(("kraftwalk", *path.relative_to(ROOT).with_suffix("").parts))] = path
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


# Each package's layers, lowest first: a module imports only from its own layer and
# the ones before it (kernels: kernels/__init__.py; kraftwalk: the package folders).
KERNEL_LAYERS = [("jit", "features"), ("state",), ("properties",), ("protocol",),
                 ("transition",), ("choosers",), ("drivers",)]
PACKAGE_LAYERS = [("vocabulary",), ("errors", "config", "elect_config", "sweep_spec"),
                  ("kernels",), ("kernel_inputs",), ("reference", "storage"), ("run",),
                  ("counterexamples",), ("commands",), ("cli", "__main__")]


def _layer(module: str) -> tuple[str, int] | None:
    parts = module.split(".")
    if parts[:2] == ["kraftwalk", "kernels"] and len(parts) > 2:
        layers, part = KERNEL_LAYERS, parts[2]
    else:
        layers, part = PACKAGE_LAYERS, parts[1] if len(parts) > 1 else None
    if part is None:
        return None
    for i, names in enumerate(layers):
        if part in names:
            return ("kernels" if layers is KERNEL_LAYERS else "kraftwalk"), i
    raise AssertionError(f"{module} is in no layer: add it to test_layers.py")


def test_every_module_is_in_a_layer():
    for m in MODULES:
        _layer(m)


def test_no_layer_imports_a_higher_one():
    for m in MODULES:
        mine = _layer(m)
        for d in GRAPH[m]:
            theirs = _layer(d)
            if mine is None or theirs is None:
                continue
            if mine[0] == theirs[0]:
                assert theirs[1] <= mine[1], f"{m} imports {d}, a higher layer"
            elif mine[0] == "kernels":  # the kernels sit on the vocabulary alone
                assert d.startswith("kraftwalk.vocabulary"), f"{m} imports {d}"


def test_the_vocabulary_imports_only_itself_and_the_standard_library():
    for m in MODULES:
        if m.startswith("kraftwalk.vocabulary"):
            for d in _imports(m):
                top = d.split(".")[0]
                assert d.startswith("kraftwalk.vocabulary") or top in sys.stdlib_module_names, \
                    f"{m} imports {d}"


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
