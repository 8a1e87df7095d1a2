"""The engine and the bot stay readable in pieces (issue 32): no module of engine/ or bot/
over 500 lines and no function over 60, read from the source with ``ast`` so that a growing
one fails here rather than in review; nor a model of more than 15 fields."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pkgutil
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import BaseModel

import bot

ROOT = Path(__file__).resolve().parents[2]
MOST_LINES = 500  # per module
MOST_FUNCTION_LINES = 60  # per function or method, its signature and docstring included
MOST_FIELDS = 15  # per dataclass or pydantic model of bot/


def _too_long(package: str) -> list[str]:
    """Every module and function of ``package`` over its limit, with its length."""
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        source = path.read_text()
        name = path.relative_to(ROOT)
        if (lines := len(source.splitlines())) > MOST_LINES:
            found.append(f"{name}: {lines} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MOST_FUNCTION_LINES:
                    found.append(f"{name}:{node.lineno} {node.name}: {length} lines")
    return found


@pytest.mark.parametrize("package", ["engine", "bot"])
def test_modules_and_functions_stay_small(package: str) -> None:
    assert _too_long(package) == []


def _fields(module: ModuleType) -> dict[str, int]:
    """The number of fields of each pydantic model and dataclass ``module`` defines, by
    its dotted name."""
    found = {}
    for model in vars(module).values():
        if isinstance(model, type) and model.__module__ == module.__name__:
            name = f"{module.__name__}.{model.__qualname__}"
            if issubclass(model, BaseModel):
                found[name] = len(model.model_fields)
            elif dataclasses.is_dataclass(model):
                found[name] = len(dataclasses.fields(model))
    return found


def test_every_model_of_the_bot_stays_small() -> None:
    """A model that outgrows its fields gets a part (as :class:`bot.core.models.Table`
    has its lobby, clock, delivery and the like) rather than one more field; not only what
    the bot stores: a game's entry (:class:`bot.screens.game.BotGame`) has its names,
    standings, texts, lobby, screens and page as parts, too."""
    found = {}
    for module in pkgutil.walk_packages(bot.__path__, "bot."):
        found |= _fields(importlib.import_module(module.name))
    assert "bot.core.models.Table" in found and "bot.screens.game.BotGame" in found
    assert {name: n for name, n in found.items() if n > MOST_FIELDS} == {}


# the figures, for a quick look: python tests/project/test_engine_sizes.py
if __name__ == "__main__":
    for package in ("engine", "bot"):
        print("\n".join(_too_long(package)) or f"{package}/: within the limits")
