"""A person's own small keys, a part of :class:`bot.core.store.Store`: where he keeps his
hands, the seat his last inline query offered, the settings of his last game of each kind,
and the tables whose private chat refused him (:mod:`bot.core.keys`). Each is read or
written alone."""

from __future__ import annotations

import redis.asyncio as aioredis

from bot.core import replies
from bot.core.keys import closed_key, inviter_key, place_key, settings_key
from bot.core.models import GameSettings, Place, Seat
from engine.registry import GAMES


class PersonalKeys:
    """The store's keys of one person (see the module docstring)."""

    redis: aioredis.Redis

    async def place(self, user_id: int) -> Place | None:
        """Where ``user_id`` chose to keep his hands (``ct:place``; None: he never chose)."""
        raw = await self.redis.get(place_key(user_id))
        return None if raw is None else "private" if replies.text(raw) == "private" else "group"

    async def set_place(self, user_id: int, place: Place) -> None:
        await self.redis.set(place_key(user_id), place.encode())

    async def forget_place(self, user_id: int) -> None:
        """/forgetme: his choice of place, of each game's settings and his inviter's seat
        go with his figures."""
        settings = (settings_key(user_id, k) for k in GAMES)
        await self.redis.delete(place_key(user_id), inviter_key(user_id), *settings)

    async def inviter(self, user_id: int) -> Seat | None:
        """His seat as his last inline query offered it (``ct:inviter``; None: none kept)."""
        raw = await self.redis.get(inviter_key(user_id))
        try:
            return None if raw is None else Seat.from_stored(raw)
        except ValueError:
            return None

    async def set_inviter(self, seat: Seat) -> None:
        """Kept for a day: long enough for the invitations that query listed."""
        await self.redis.set(inviter_key(seat.user_id), seat.model_dump_json(), ex=86400)

    async def last_settings(self, user_id: int, kind: str) -> GameSettings | None:
        """The settings of the last game ``kind`` that ``user_id`` started (``ct:set``;
        None: none, or one stored by a version that no longer reads it)."""
        raw = await self.redis.get(settings_key(user_id, kind))
        try:
            return None if raw is None else GameSettings.model_validate_json(raw)
        except ValueError:
            return None

    async def set_last_settings(self, user_id: int, kind: str, settings: GameSettings) -> None:
        await self.redis.set(settings_key(user_id, kind), settings.model_dump_json())

    async def closed_to(self, user_id: int) -> list[str]:
        """The table keys where ``user_id``'s private chat refused us."""
        found = await self.redis.smembers(closed_key(user_id))
        return sorted(replies.text(k) for k in found)
