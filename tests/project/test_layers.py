"""The shape of bot/ (docs/architecture.md): each module imports only from its own layer or
a lower one, there are no import cycles in bot/ and engine/, and no module imports inside
a function to dodge one. Read from the source with ``ast``, so that a new import that
breaks the layering fails here rather than in review."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Lowest first: each layer is a package of bot/ (docs/architecture.md explains each; a
# ``.*`` entry is a folder, its modules at any depth in the layer), but for the Mini App,
# a slice of its own whose modules sit in the layers named here, and the start-up modules
# at the top of bot/. The screens are three layers: the kit a game's screens are drawn
# with (its context, the entry it fills in, the Mini App's buttons), the games' folders, and
# the screens that ask a table's game of the registry.
LAYERS = (
    ("bot.core.*", "bot.webapp", "bot.webapp.auth", "bot.webapp.quota"),
    ("bot.tables.*",),
    ("bot.screens.render", "bot.screens.game", "bot.screens.links"),
    ("bot.games.*",),
    ("bot.screens.*",),
    ("bot.service.*",),
    ("bot.handlers.*", "bot.webapp.api", "bot.webapp.streams", "bot.endpoints"),
    (
        "bot.app",
        "bot.webapp.page",
        "bot.webapp.server",
        "bot.__main__",
        "bot.runner",
        "bot.inbox",
        "bot",
    ),
)


def _modules() -> dict[str, Path]:
    found = {}
    for package in ("bot", "engine"):
        for path in sorted((ROOT / package).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


MODULES = _modules()
PACKAGES = {name for name, path in MODULES.items() if path.name == "__init__.py"}


def _imported(node: ast.Import | ast.ImportFrom) -> set[str]:
    """The project modules an import statement names (``from bot import core`` names bot.core)."""
    if isinstance(node, ast.Import):
        return _with_packages({a.name for a in node.names if a.name in MODULES})
    if node.module is None:
        return set()
    names = {f"{node.module}.{a.name}" for a in node.names} & MODULES.keys()
    return _with_packages(names or ({node.module} & MODULES.keys()))


def _with_packages(names: set[str]) -> set[str]:
    """``names`` and the packages they are in: Python runs a package's ``__init__`` before
    any module of it, so importing ``engine.games.durak.rules`` imports ``engine.games.durak``
    and ``engine.games`` too (an import cycle through a package's ``__init__`` is a cycle
    all the same)."""
    found = set(names)
    for name in names:
        parts = name.split(".")
        found |= {".".join(parts[:i]) for i in range(1, len(parts))} & MODULES.keys()
    return found


def _imports(name: str) -> tuple[set[str], list[int]]:
    """(modules ``name`` imports, lines of imports not at module level)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    found: set[str] = set()
    nested: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom) and (names := _imported(node)):
            found |= names - {name}
            if id(node) not in top:
                nested.append(node.lineno)
    return found, nested


GRAPH = {name: _imports(name)[0] for name in MODULES}


def _layer(name: str) -> int | None:
    """The layer of a module: the one its package, or the module itself, is listed in."""
    for depth, names in enumerate(LAYERS):
        folders = [entry.removesuffix(".*") for entry in names if entry.endswith(".*")]
        if name in names or any(name == f or name.startswith(f + ".") for f in folders):
            return depth
    return None


LAYER = {name: depth for name in MODULES if (depth := _layer(name)) is not None}


def test_every_bot_module_has_a_layer() -> None:
    assert sorted(n for n in MODULES if n.startswith("bot") and n not in LAYER) == []


@pytest.mark.parametrize("name", sorted(LAYER))
def test_a_bot_module_imports_only_its_own_layer_or_lower(name: str) -> None:
    # a package's __init__ (bot, bot.core, …) holds no code that imports: only a cycle
    # could make one matter, and the cycle test looks at those
    higher = sorted(m for m in GRAPH[name] if LAYER.get(m, -1) > LAYER[name] and m not in PACKAGES)
    assert not higher, f"{name} (layer {LAYER[name] + 1}) imports {higher}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_import_hides_inside_a_function(name: str) -> None:
    assert _imports(name)[1] == []


def test_there_is_no_import_cycle() -> None:
    def reaches(start: str) -> set[str]:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for nxt in GRAPH[todo.pop()] - seen:
                seen.add(nxt)
                todo.append(nxt)
        return seen

    cycles = [n for n in MODULES if n in reaches(n)]
    assert cycles == []
