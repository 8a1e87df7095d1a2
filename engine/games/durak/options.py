"""A durak game's options and whom they seat (seeds/durak.md §1, §9, §10.2): the lobby's
settings, the variants a record leaves out at their defaults, and the deck's seating."""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, model_validator

from engine import cards

HAND = 6  # cards dealt to every hand, and what the draw fills up to
MIN_PLAYERS = 2
MOST_PLAYERS = 6  # at any table, whatever the deck


class DurakOptions(BaseModel):
    """The lobby settings (seeds/durak.md §1, §3.4, §3.2 and the variants of §9): the
    deck, the dummy and whether it plays, the rematch lead, transfers, who throws in and
    five before the first discard. The defaults are the seed's game."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    deck_size: Annotated[Literal[36, 52, 24], BeforeValidator(cards.integer_deck_size)] = 36
    dummy_plays: bool = False
    first_move: Literal["under", "from_under"] = "under"
    dummy: bool = True
    transfer: bool = False
    throw_in: Literal["all", "neighbours"] = "all"
    five_before_discard: bool = False

    @model_validator(mode="after")
    def _allowed(self) -> Self:
        why = refusal(self)
        if why is not None:
            raise ValueError(why)
        return self


VARIANTS = ("dummy", "transfer", "throw_in", "five_before_discard")


def unwritten(options: DurakOptions) -> frozenset[str]:
    """The variants' options left at their default, which a record or a stored state
    leaves out: the seed's game is written exactly as before the variants existed (and
    an older engine still reads it)."""
    fields = DurakOptions.model_fields
    return frozenset(k for k in VARIANTS if getattr(options, k) == fields[k].default)


# What each option needs (§9): the dummy on or off, for any value but its default. The
# engine refuses the rest; the lobby offers an option only where its dummy is chosen.
NEEDS_DUMMY: dict[str, bool] = {"dummy_plays": True, "transfer": False, "throw_in": False}


def refusal(options: DurakOptions) -> str | None:
    """Why a combination of options is no game (what each option needs, §9), or None."""
    fields = DurakOptions.model_fields
    for name, dummy in NEEDS_DUMMY.items():
        value = getattr(options, name)
        if options.dummy != dummy and value != fields[name].default:
            shown = name if isinstance(value, bool) else f"{name}: {value}"
            return f"{shown} needs dummy: {'true' if dummy else 'false'}"
    return None


def seating(options: DurakOptions) -> tuple[int, int]:
    """(fewest, most) players a game with these options seats (§1, §10.2): six cards to
    each hand; with the dummy, six to it too and one card left over for the trump."""
    size = options.deck_size
    most = (size - 1) // HAND - 1 if options.dummy else size // HAND
    return MIN_PLAYERS, min(MOST_PLAYERS, most)


class SeatingError(ValueError):
    """Too many or too few players for the deck and options; names a larger deck that
    seats them, if one does."""

    def __init__(self, players: int, options: DurakOptions) -> None:
        _, most = seating(options)
        game = f"a {options.deck_size}-card game" + ("" if options.dummy else " without the dummy")
        larger = [
            (size, seating(options.model_copy(update={"deck_size": size}))[1])
            for size in (36, 52)
            if size > options.deck_size
        ]
        fits = [f" (the {s}-card deck takes up to {m})" for s, m in larger if m >= players]
        hint = fits[0] if fits and players > most else ""
        super().__init__(f"{game} takes {MIN_PLAYERS} to {most} players, not {players}{hint}")
        self.players = players
        self.deck_size = options.deck_size
        self.most = most
