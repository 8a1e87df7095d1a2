"""Durak (seeds/durak.md), the seed's game with a dummy and its variants, behind the
:class:`engine.base.Game` protocol: the rules (:mod:`.rules`) with their codecs
(:mod:`.codec`) and views (:mod:`.view`)."""

from __future__ import annotations

from typing import ClassVar

from engine.games.durak.codec import DurakCodec
from engine.games.durak.view import DurakViewer


class Durak(DurakCodec, DurakViewer):
    """One game of durak, as the bot, the records and the players see it."""

    name: ClassVar[str] = "durak"
    __slots__ = ()
