"""The engine and the bot stay readable in pieces (issue 32): no module of engine/ or bot/
over 500 lines and no function over 60, read from the source with ``ast`` so that a growing
one fails here rather than in review; nor a stored model of more than 15 fields."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest
from pydantic import BaseModel

from bot.core import models

ROOT = Path(__file__).resolve().parents[2]
MOST_LINES = 500  # per module
MOST_FUNCTION_LINES = 60  # per function or method, its signature and docstring included
MOST_FIELDS = 15  # per model of what the bot stores (bot.core.models)


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


def test_stored_models_stay_small() -> None:
    """A model that outgrows its fields gets a part (as :class:`bot.core.models.Table`
    has its lobby, clock, delivery and the like) rather than one more field."""
    found = {}
    for model in vars(models).values():
        if isinstance(model, type) and model.__module__ == models.__name__:
            if issubclass(model, BaseModel):
                found[model.__name__] = len(model.model_fields)
            elif dataclasses.is_dataclass(model):
                found[model.__name__] = len(dataclasses.fields(model))
    assert "Table" in found
    assert {name: n for name, n in found.items() if n > MOST_FIELDS} == {}


# the figures, for a quick look: python tests/project/test_engine_sizes.py
if __name__ == "__main__":
    for package in ("engine", "bot"):
        print("\n".join(_too_long(package)) or f"{package}/: within the limits")
