"""What a durak game is called: the variant its options make, in the words players use
("Perevodnoy durak · 36 cards · neighbours"; seeds/durak.md §9). The one place that
names a variant: the lobby, the table, every hand, the result, /stats and the record
all ask :func:`name` (through :attr:`bot.screens.game.Names.naming`)."""

from __future__ import annotations

from pydantic import BaseModel

from bot.core.i18n import Markup, t
from engine.games.durak.rules import DurakOptions

# The family each variant belongs to, as groups call it.
_FAMILY = {
    "dummy": "variant.durak.dummy",
    "podkidnoy": "variant.durak.podkidnoy",
    "perevodnoy": "variant.durak.perevodnoy",
}


def family(options: DurakOptions) -> str:
    """With the dummy (the seed's game), podkidnoy (no dummy) or perevodnoy (transfers)."""
    if options.dummy:
        return "dummy"
    return "perevodnoy" if options.transfer else "podkidnoy"


def name(lang: str, options: BaseModel) -> Markup:
    """The variant ``options`` make, named in ``lang``: its family and deck, then what
    sets it apart from its family's usual game."""
    assert isinstance(options, DurakOptions)
    parts = [t(lang, _FAMILY[family(options)]), t(lang, "variant.cards", n=options.deck_size)]
    if options.dummy_plays:
        parts.append(t(lang, "variant.dummy_plays"))
    if options.throw_in == "neighbours":
        parts.append(t(lang, "variant.neighbours"))
    if options.five_before_discard:
        parts.append(t(lang, "variant.five"))
    return Markup(" · ").join(parts)
