"""Durak in the bot, every variant of it: its screens, settings, texts and Mini App
drawing, as the bot's registry lists them (:class:`bot.screens.game.BotGame`)."""

from __future__ import annotations

from importlib import resources

from bot.games.durak import screens, settings, variant
from bot.screens.game import BotGame, LobbyOptions, Names, Page, Screens, Standings, Texts
from bot.screens.render import Words
from engine.games.durak.spec import SPEC

_HERE = resources.files(__package__ or "")

# The narration of each event the engine emits, by kind.
EVENTS = {
    "bout": "event.durak.bout",
    "attack": "event.durak.attack",
    "beat": "event.durak.beat",
    "transfer": "event.durak.transfer",
    "take_declared": "event.durak.take_declared",
    "throw": "event.durak.throw",
    "pass": "event.durak.pass",
    "took": "event.durak.took",
    "discarded": "event.durak.discarded",
    "drew": "event.durak.drew",
    "out": "event.durak.out",
    "control": "event.durak.control",
    "finished": "event.durak.finished",
}
# The text of each reason of its own the engine refuses a move for.
REFUSALS = {
    "cannot_beat_now": "illegal.cannot_beat_now",
    "cannot_beat": "illegal.cannot_beat",
    "cannot_take_now": "illegal.cannot_take_now",
    "cannot_pass_now": "illegal.cannot_pass_now",
    "rank_not_on_table": "illegal.rank_not_on_table",
    "not_in_game": "illegal.not_in_game",
    "not_in_hand": "illegal.not_in_hand",
    "not_on_table": "illegal.not_on_table",
    "cannot_attack_now": "illegal.cannot_attack_now",
    "cannot_throw_now": "illegal.cannot_throw_now",
    "cannot_transfer_now": "illegal.cannot_transfer_now",
    "transfer_after_beat": "illegal.transfer_after_beat",
    "transfer_rank": "illegal.transfer_rank",
    "transfer_too_few": "illegal.transfer_too_few",
}
# Its engine data: seats (the dummy by name), and the card a refusal says would beat.
WORDS = Words(
    seats=frozenset({"attacker", "defender", "fool"}),
    cards=frozenset({"with_card"}),
    others={"dummy": "durak.dummy"},
)
# The words its drawing on the page uses.
PAGE_WORDS = {
    "dummy": "webapp.dummy",
    "table": "webapp.table",
    "trump": "webapp.trump",
    "stock": "webapp.stock",
    "discard": "webapp.discard",
    "dummy_name": "durak.dummy",
    "attacks": "webapp.attacks",
    "defends": "webapp.defends",
    "done": "webapp.done",
    "beat_on": "webapp.beat_on",
    "transfer": "webapp.transfer",
}

ENTRY = BotGame(
    spec=SPEC,
    letter="d",
    names=Names(title="game.durak", naming=variant.name, series="series.durak"),
    standings=Standings(
        row="stats.row_durak",
        streak="stats.streak_durak",
        share="fool",
        figures=screens.figures,
    ),
    texts=Texts(events=EVENTS, refusals=REFUSALS, words=WORDS),
    lobby=LobbyOptions(
        options=settings.OPTIONS, seatings=settings.SEATINGS, settings=settings.lines
    ),
    screens=Screens(
        group=screens.public, status=screens.status, hand=screens.hand, alert=screens.alert
    ),
    page=Page(
        played=screens.played,
        words=PAGE_WORDS,
        script=_HERE.joinpath("page.js"),
        style=_HERE.joinpath("page.css"),
    ),
)
