"""Forged move tokens get alerts that name no hidden card but the one named, worded alike
wherever a hidden card is: asking about each card in turn maps nothing."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from bot.core.callbacks import Action, Callback, decode, encode
from engine import cards, registry
from engine.base import MalformedRecord
from engine.games.durak.game import Durak
from testing.chats import FakeUser
from testing.harness import Harness
from testing.tabletop import Tabletop, card_pattern, game_for, hidden_cards, leaks, stored

DECK_36 = cards.to_strs(cards.deck(36))
CATALOGUE_KEY = re.compile(r"[a-z0-9_]+(\.[a-z0-9_]+)+")


def normalised(text: str, named: list[str]) -> str:
    for card in named:
        text = card_pattern(card).sub("#", text)
    return re.sub(r"\s+", " ", text)


def position_prefix(top: Tabletop, players: list[FakeUser], data: dict[str, Any]) -> str:
    """The position stamp before the token on a button offered now: forged taps carry it."""
    game = registry.spec(data["kind"]).game.from_json(data["state"])
    for seat, user in enumerate(players_in_seats(players, data)):
        prompt = top.prompt(user)
        for button in prompt.buttons if prompt is not None else []:
            arg = decode(button.callback_data).arg
            for cut in range(len(arg)):
                try:
                    game.move_from_token(arg[cut:], seat)
                except MalformedRecord:
                    continue
                return arg[:cut]
    return ""


async def probe(
    top: Tabletop, user: FakeUser, seat: int, tokens: dict[str, list[str]], prefix: str
) -> None:
    """Sends every forged token; checks the table did not change and what the alerts say."""
    h = top.h
    data = await stored(h, top.group)
    hidden = hidden_cards(data["kind"], data["state"], seat)
    prompt = h.last(user)
    # Per kind of token (attack, throw, beat, dummy's...): the alert's wording classes.
    by_class: dict[str, set[str]] = {}
    for token, named in tokens.items():
        forged = encode(Callback(top.group.id, None, data["game_id"], Action.MOVE, prefix + token))
        answer = await h.tap_data(user, user.id, prompt.message_id, forged)
        assert answer.show_alert and answer.text, f"{token} was not refused"
        text = answer.text
        assert not CATALOGUE_KEY.fullmatch(text), f"{token}: an untranslated alert {text!r}"
        others = leaks(text, hidden - set(named))
        assert not others, f"the alert for {token} shows {others}: {text}"
        if set(named) <= hidden:
            kind = re.sub(r"(10|[2-9JQKA])[SCDH]", "", token)
            by_class.setdefault(kind, set()).add(normalised(text, named))
    assert await stored(h, top.group) == data
    varied = {kind: texts for kind, texts in by_class.items() if len(texts) > 1}
    assert not varied, f"alerts about hidden cards differ with where they are: {varied}"


def players_in_seats(players: list[FakeUser], data: dict[str, Any]) -> list[FakeUser]:
    by_id = {u.id: u for u in players}
    return [by_id[s["user_id"]] for s in data["seats"]]


def durak_tokens(hand: set[str], table: list[str]) -> dict[str, list[str]]:
    tokens: dict[str, list[str]] = {}
    for card in DECK_36:
        if card in hand:
            continue  # his own cards: a refusal may well explain itself
        for prefix in ("", "d"):
            tokens[f"{prefix}a{card}"] = [card]
            tokens[f"{prefix}w{card}"] = [card]
            for attack in table[:1] or ["6S"]:
                tokens[f"{prefix}b{attack}{card}"] = [attack, card]
    return tokens


async def test_forged_durak_moves_reveal_no_hidden_card(
    harness: Harness, deals: Callable[[int], None]
) -> None:
    h = harness
    deals(3)  # the same positions at every run
    top, players = await game_for(h, "durak", 3)
    rng = random.Random(1)
    # Probed: the deal, after a take (his cards known), an attack on the table, and after
    # a bout beaten off (two cards discarded); the positions between them were alike.
    for position in range(6):
        data = await stored(h, top.group)
        probed = players_in_seats(players, data) if position in (0, 3, 4, 5) else []
        for seat, user in enumerate(probed):
            view = Durak.from_json(data["state"]).view(seat)
            mine = set(view.hand) | set(view.dummy_hand or [])
            on_table = [a for a, d in view.table if d is None]
            prefix = position_prefix(top, players, data)
            await probe(top, user, seat, durak_tokens(mine, on_table), prefix)
        for _ in range(rng.randrange(1, 4)):
            if not top.finished():
                await top.step(players, rng)


async def test_forged_football_moves_reveal_no_hidden_card(harness: Harness) -> None:
    h = harness
    top, players = await game_for(h, "football")
    rng = random.Random(3)
    tokens = {f"{kind}{col}": [] for kind in "ea" for col in range(4)}
    for _ in range(25):
        data = await stored(h, top.group)
        for seat, user in enumerate(players_in_seats(players, data)):
            prompt = top.prompt(user)
            offered = {decode(b.callback_data).arg for b in prompt.buttons} if prompt else set()
            prefix = position_prefix(top, players, data)
            forged = {t: n for t, n in tokens.items() if prefix + t not in offered}
            await probe(top, user, seat, forged, prefix)
        await top.step(players, rng)
        if top.finished():
            break
