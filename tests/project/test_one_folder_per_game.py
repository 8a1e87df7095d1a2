"""A game lives in its folders (``engine/games/<game>/``, ``bot/games/<game>/``): nothing
else in ``engine/`` or ``bot/`` names a game or branches on one, the shared renderer and
the Mini App page included, but for the two registries' lists of the games' folders. So a
third game is added by adding its folders and one entry in each registry.

Read from the source: every identifier and every string of the code (docstrings and
comments are prose, which may name a game as an example), and the page's whole files."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from bot.screens import registry as bot_registry
from engine import registry

ROOT = Path(__file__).resolve().parents[2]
GAMES = sorted(registry.GAMES)
NAMED = re.compile("|".join(GAMES), re.IGNORECASE)
# The games' own folders.
FOLDERS = [ROOT / package / "games" / game for package in ("engine", "bot") for game in GAMES]
# The lists of the games' folders, and the place a game's name is the whole point.
ALLOWED = {"engine/registry.py", "bot/screens/registry.py"}


def _shared(suffixes: tuple[str, ...]) -> list[Path]:
    found = []
    for package in ("engine", "bot"):
        for path in sorted((ROOT / package).rglob("*")):
            if path.suffix not in suffixes or any(path.is_relative_to(f) for f in FOLDERS):
                continue
            if path.relative_to(ROOT).as_posix() not in ALLOWED:
                found.append(path)
    return found


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes (prose, not code)."""
    kinds = ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
    documented = [n for n in ast.walk(tree) if isinstance(n, kinds) and ast.get_docstring(n)]
    return {id(node.body[0].value) for node in documented}


def _code_words(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, text) of every identifier and string of the code."""
    prose = _docstrings(tree)
    words: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Name):
            words.append((line, node.id))
        elif isinstance(node, ast.Attribute):
            words.append((line, node.attr))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            words.append((line, node.name))
        elif isinstance(node, ast.arg | ast.keyword) and node.arg:
            words.append((line, node.arg))
        elif isinstance(node, ast.alias):
            words += [(line, node.name), (line, node.asname or "")]
        elif isinstance(node, ast.ImportFrom) and node.module:
            words.append((line, node.module))
        elif (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
        ):
            words.append((line, node.value))
    return words


@pytest.mark.parametrize("path", _shared((".py",)), ids=lambda p: str(p.relative_to(ROOT)))
def test_shared_code_names_no_game(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    named = [(line, word) for line, word in _code_words(tree) if NAMED.search(word)]
    assert named == []


@pytest.mark.parametrize(
    "path", _shared((".js", ".css", ".html")), ids=lambda p: str(p.relative_to(ROOT))
)
def test_the_page_names_no_game(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [(i, line) for i, line in enumerate(lines, 1) if NAMED.search(line)] == []


def test_each_game_has_its_folders_and_one_entry_in_each_registry() -> None:
    assert list(bot_registry.GAMES) == list(registry.GAMES)
    for game in GAMES:
        assert (ROOT / "engine" / "games" / game / "spec.py").is_file()
        assert (ROOT / "bot" / "games" / game / "entry.py").is_file()
        assert bot_registry.GAMES[game].spec is registry.GAMES[game]
