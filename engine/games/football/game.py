"""Belarusian football (seeds/football.md) behind the :class:`engine.base.Game` protocol:
the rules (:mod:`.rules`) with their codecs (:mod:`.codec`) and views (:mod:`.view`)."""

from __future__ import annotations

from typing import ClassVar

from engine.games.football.codec import FootballCodec
from engine.games.football.view import FootballViewer


class Football(FootballCodec, FootballViewer):
    """One game of Belarusian football between two seats."""

    name: ClassVar[str] = "football"
    __slots__ = ()
