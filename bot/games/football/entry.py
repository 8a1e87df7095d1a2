"""Belarusian football in the bot: its screens, settings, texts and Mini App drawing, as
the bot's registry lists them (:class:`bot.screens.game.BotGame`)."""

from __future__ import annotations

from importlib import resources

from bot.games.football import page, screens, settings
from bot.screens.game import BotGame, LobbyOptions, Names, Page, Screens, Standings, Texts
from bot.screens.render import Words
from engine.games.football.spec import SPEC

_HERE = resources.files(__package__ or "")

# The narration of each event the engine emits, by kind (and reason: ``kind.reason``).
EVENTS = {
    "setup_done": "event.football.setup_done",
    "started": "event.football.started",
    "drew": "event.football.drew",
    "ball_out.no_entry": "event.football.ball_out.no_entry",
    "ball_out.no_match": "event.football.ball_out.no_match",
    "ball_out.dead_end": "event.football.ball_out.dead_end",
    "entered": "event.football.entered",
    "flipped": "event.football.flipped",
    "stepped": "event.football.stepped",
    "keeper": "event.football.keeper",
    "goal": "event.football.goal",
    "saved": "event.football.saved",
    "finished": "event.football.finished",
}
# The text of each reason of its own the engine refuses a move for.
REFUSALS = {
    "not_in_setup": "illegal.not_in_setup",
    "already_set_up": "illegal.already_set_up",
    "setup_cards_mismatch": "illegal.setup_cards_mismatch",
    "setup_over": "illegal.setup_over",
    "must_enter": "illegal.must_enter",
    "must_advance": "illegal.must_advance",
    "no_such_column": "illegal.no_such_column",
    "cannot_enter": "illegal.cannot_enter",
    "not_reachable": "illegal.not_reachable",
    "face_up_no_match": "illegal.face_up_no_match",
}
# Its engine data: the winner's seat, the ball's card, the score.
WORDS = Words(seats=frozenset({"winner"}), cards=frozenset({"ball"}), scores=frozenset({"goals"}))

# The words its drawing on the page uses (page.js), beyond the page's own.
PAGE_WORDS = {
    "field": "webapp.football.field",
    "pile": "webapp.football.pile",
    "keeper": "webapp.football.keeper",
    "slot": "webapp.football.slot",
    "goals": "webapp.football.goals",
    "ask_keeper": "webapp.football.ask_keeper",
    "ask_row": "webapp.football.ask_row",
    "goal": "webapp.football.goal",
    "saved": "webapp.football.saved",
}

ENTRY = BotGame(
    spec=SPEC,
    letter="f",
    names=Names(title="game.football", naming=settings.name, series="series.football"),
    standings=Standings(
        row="stats.row_football",
        streak="stats.streak_football",
        share="won",
        figures=screens.figures,
    ),
    texts=Texts(events=EVENTS, refusals=REFUSALS, words=WORDS),
    lobby=LobbyOptions(
        options=settings.OPTIONS, seatings=settings.SEATINGS, settings=settings.lines
    ),
    screens=Screens(
        group=screens.group, status=screens.status, hand=screens.hand, alert=screens.alert
    ),
    page=Page(
        played=screens.played,
        words=PAGE_WORDS,
        script=_HERE.joinpath("page.js"),
        style=_HERE.joinpath("page.css"),
        scene=page.scene,
    ),
)
