"""Football's lobby options (seeds/football.md §1)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from engine import cards


class FootballOptions(BaseModel):
    """Lobby options (seeds/football.md §1); strict: unknown keys and wrong types refused."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    decks: int = Field(default=1, ge=1, le=cards.MAX_DECKS)
    deck_size: Annotated[Literal[36, 52], BeforeValidator(cards.integer_deck_size)] = 36
