"""What the bot keeps per table (a group chat, or a forum topic in it).

The engine state is one opaque JSON string here: the bot never reads it except through
the engine (:mod:`bot.handlers.play` loads it, renderers get views). Everything else is the bot's
own bookkeeping: who sits where, the lobby settings, the record's moves, the last events,
the series score.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, create_model

from bot.core import callbacks
from engine.registry import GAMES

# A game's name, one of engine.registry's (a stored table naming another is refused).
GameKind = Annotated[str, Field(pattern="^(?:" + "|".join(map(re.escape, GAMES)) + ")$")]
# pick: the game picker is shown; lobby: players join; playing; finished: a result is
# shown; abandoned: stopped by /endgame.
Phase = Literal["pick", "lobby", "playing", "finished", "abandoned"]
DeckSize = Literal[24, 36, 52]  # every game's; its own options say which it plays
TURN_TIMES = (30, 60, 120, 300, 0)  # seconds; 0 = no limit
# Where a player's hand lives: an ephemeral message in the group (only he sees it;
# docs/ephemeral.md), or his private chat with the bot.
Place = Literal["group", "private"]
RECENT_EVENTS = 6
# Applied taps remembered per table: far more than can be in flight while one is redelivered.
TAPS_KEPT = 32
# The version of the stored form of a table (see Table.from_stored): a table this version
# stored begins with it, and loads without the migration of older forms. A change of the
# form that older tables must be migrated for raises it (and extends _table_form).
FORM: Final = 3


class GameSettings(BaseModel):
    """The lobby's settings, one model for every game: the deck and the turn time, which
    every game has, and beside them each game's own options, the other fields of its
    engine options model (:attr:`engine.spec.GameSpec.options`), each a field here as it
    is there (:func:`_with_game_options`), checked and defaulted as it is there. A game
    reads them as its options (:meth:`engine.spec.GameSpec.make_options`) and changes one
    with :meth:`choose`. A stored option no game has any more is dropped."""

    model_config = ConfigDict(validate_assignment=True)

    deck_size: DeckSize = 36
    turn_time: int = 60

    def choose(self, name: str, value: Any) -> None:
        """Set a game's own option ``name``, checked as its model's field says."""
        setattr(self, name, value)


def _with_game_options(common: type[GameSettings]) -> type[GameSettings]:
    """``common`` with each game's own options as fields, by name (games that share an
    option's name must mean the same by it): pydantic checks and defaults them itself,
    on every load, with no code of ours to run."""
    found: dict[str, Any] = {}
    for spec in GAMES.values():
        for name, info in spec.options.model_fields.items():
            if name in common.model_fields:
                continue
            shape = (info.annotation, info.get_default())
            if name in found and found[name][1] != shape:
                raise TypeError(f"games disagree on option {name!r}")
            found[name] = ((info.annotation, info), shape)
    fields = {name: field for name, (field, _) in found.items()}
    return create_model(
        common.__name__, __base__=common, __module__=__name__, __doc__=common.__doc__, **fields
    )


if not TYPE_CHECKING:  # to a type checker, the options are what getattr finds
    GameSettings = _with_game_options(GameSettings)


class Reach(BaseModel):
    """How the delivery reaches one seat's hand: where it lives and what Telegram let
    through. The delivery writes these (bot.service.messages.refusals), and the taps
    that ask for his hand again (bot.handlers.play, bot.handlers.members)."""

    # Where his hand lives (his choice, remembered for his next games: bot.core.store's
    # ct:place); a table in a private chat keeps it there whatever he chose.
    place: Place = "group"
    # False once a private message to him failed (403): the group is told to open the
    # private chat, and the "My cards" button shows him his hand meanwhile.
    dm_ok: bool = True
    # False once the group refused an ephemeral message to him: his hand goes to his
    # private chat, or waits for "My cards", which makes it True again.
    group_ok: bool = True
    # The group's refusal said the bot is not an administrator: once it is made one
    # (my_chat_member), his hand comes back to the group (bot.handlers.members).
    admin_refused: bool = False
    # Bumped by "My cards" and by a switch of place: his hand in the group comes as a new
    # ephemeral message (the old one is deleted and no longer edited).
    renew: int = 0
    # An inline table: a private "your turn" message when his turn has waited a while
    # (bot.service.messages.your_turn), until he switches it off there.
    nudge: bool = True


class Inline(BaseModel):
    """Where an inline table's message lives (issue 34): posted via the bot in a chat the
    bot need not be in, and edited by its ``inline_message_id``. Such a table's address is
    chat :data:`bot.core.callbacks.INLINE_CHAT` and, as its "topic", the number
    :func:`bot.core.callbacks.inline_number` makes of that id."""

    message: str  # its inline_message_id
    # The chat it was posted in, as Telegram names it to the bot (the first tap on it says):
    # the chat's own leaderboard and the limits of its edits are kept by it.
    chat_instance: str = ""
    group: bool = False  # posted in a group (the inline query's chat_type said so)
    # Telegram reported the pick that posted it (inline feedback is on): a game may start,
    # its moves being picks that only such reports play.
    reported: bool = False


class Seat(BaseModel):
    """A player at the table, in engine seat order."""

    user_id: int
    name: str
    lang: str = "en"
    # A set-up in progress, in a game whose players first place their dealt cards
    # (engine.base.SetsUp): the cards he has picked so far, as indices into his hand.
    setup: list[int] = Field(default_factory=list)
    # A computer seat: its level (GameSpec.levels in engine.registry); None for a
    # person. Computer seats have negative user ids, which no Telegram user has.
    computer: str | None = None
    # Turn timeouts in a row (seeds/<game>.md §7.2); at two he is away and the computer plays for
    # him until he taps again (bot.service.turns).
    timeouts: int = 0
    away: bool = False
    reach: Reach = Field(default_factory=Reach)

    @classmethod
    def from_stored(cls, raw: str | bytes) -> Seat:
        """A seat as stored (``ct:inviter``), also in its form before :class:`Reach`
        existed; raises ValueError when it does not validate."""
        return cls.model_validate(_nest(json.loads(raw), "reach", Reach))


class Series(BaseModel):
    """A series of games at one table: its score and what carries to the next game
    (engine.series.Carry). Written when a game is dealt and when it ends
    (bot.tables.games)."""

    score: dict[str, int] = Field(default_factory=dict)  # str(user id) -> wins / fool count
    games: int = 0  # games finished in this series
    # The seat that deals (dealt) the current game, and the last game's loser, who deals
    # next (None: the first game or a drawn one).
    dealer: int | None = None
    previous_fool: int | None = None


class Lobby(BaseModel):
    """What the lobby chooses and shows: written by its taps (bot.handlers.lobby,
    bot.handlers.computer) and by the delivery's notes to it."""

    creator: int  # who opened the table: he manages the lobby, and may end the game
    lang: str = "en"
    settings: GameSettings = Field(default_factory=GameSettings)
    # The level the lobby gives new computer seats (its "🤖" buttons; bot.handlers.computer).
    computer_level: str = "normal"
    show_settings: bool = False  # the lobby message shows the settings keyboard
    lobby_link: bool = False  # the lobby offers the deep link (someone could not be reached)
    notice: str = ""  # catalogue key of a one-off line under the lobby (e.g. start refused)


class TurnClock(BaseModel):
    """The turn clock's own state (bot.service.turns writes it)."""

    # When the current position's automatic move is due (seconds since the epoch; 0: never):
    # a computer's paced move, or a person's turn timeout.
    turn_due: float = 0.0
    turn_for: str = ""  # the position and wait turn_due was set for (turns.stamp)
    turn_since: float = 0.0  # when that position began to wait for its actor
    # Moves the computer made in a row (for computer seats, or for people who timed out or
    # are away): past a cap the game is stopped (a game may cycle forever).
    auto_moves: int = 0


class Played(BaseModel):
    """What has been played in the current game: its moves in the record's form (the
    Record and the move stamps count them) and the events of the latest changes, which
    the screens narrate. Written when a game is dealt and at each move (bot.tables.games),
    and by the layers that add an event of their own (the turn clock, the delivery)."""

    moves: list[dict[str, Any]] = Field(default_factory=list)
    events: list[tuple[str, dict[str, Any]]] = Field(default_factory=list)  # the latest

    def add_events(self, events: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Only the latest are kept, for the screens narrate the latest changes: ``events``
        (an engine's :class:`engine.base.Event` is one as it is) added, the oldest dropped."""
        self.events = [*self.events, *events][-RECENT_EVENTS:]


class LastTap(NamedTuple):
    """A person's latest tap applied at a table: its callback query id, and when."""

    query_id: str
    at: float


class Delivery(BaseModel):
    """The delivery's bookkeeping: the taps it may answer, what it knows of the bot's
    rights, the Record's document, the count of a finished game."""

    # Callback query ids of the latest taps applied here (newest last): a tap delivered
    # again after it was committed (its process died before answering) is recognised
    # in the compare-and-set and answered silently, not refused (bot.service.taps.commit).
    taps: list[str] = Field(default_factory=list)
    # Each person's latest tap applied here (str(user id)): for 15 seconds an ephemeral
    # message may answer it, administrator or not (bot.service.messages.group_hand).
    last_taps: dict[str, LastTap] = Field(default_factory=dict)
    # The bot is an administrator of the group (as far as it knows: its my_chat_member
    # updates, /newgame's check, Telegram's refusals): it may then send a player's hand to
    # the group at any time, not only in answer to his tap (docs/ephemeral.md).
    bot_admin: bool = False
    # The Record button's document, once a game: ``record_asked`` is the tap's claim,
    # ``record_sent`` that the delivery posted it (or began to: an unknown outcome counts
    # as posted). A table stored before the claim existed has only ``record_sent``.
    record_asked: bool = False
    record_sent: bool = False
    # The finished game is counted in the standings (bot.service.counting, once, after the
    # commit that ends it), and who moved up on the group's board with it: (user id, place
    # from 1) each; None when it does not count in a group (bot.tables.stats).
    counted: bool = False
    moved_up: list[tuple[int, int]] | None = None

    def note_tap(self, query_id: str) -> None:
        if query_id not in self.taps:
            self.taps = [*self.taps, query_id][-TAPS_KEPT:]


def _nest(data: Any, part: str, model: type[BaseModel]) -> Any:
    """``data`` with the fields of ``model`` that an older stored form kept flat moved
    into its part ``part``."""
    if not isinstance(data, dict):
        return data
    flat = {name: data[name] for name in model.model_fields if name in data}
    if not flat:
        return data
    rest = {name: value for name, value in data.items() if name not in flat}
    return {**rest, part: {**flat, **rest.get(part, {})}}


def _table_form(data: Any) -> Any:
    """A table as an older version stored it, in the current form: before the parts
    existed (one flat model) its fields moved into them, and its seats' flags into their
    :class:`Reach`; before form 3, its moves and events were fields of the table, now of
    its :class:`Played`."""
    if not isinstance(data, dict):
        return data
    data = _old_series(data)
    data = _nest(data, "lobby", Lobby)
    data = _nest(data, "clock", TurnClock)
    data = _nest(data, "delivery", Delivery)
    data = _nest(data, "played", Played)
    seats = data.get("seats")
    if isinstance(seats, list):
        data = {**data, "seats": [_nest(seat, "reach", Reach) for seat in seats]}
    return data


def _old_series(data: dict[str, Any]) -> Any:
    """A table stored before :class:`Series`: its ``series`` was the score alone (user
    id -> count), beside ``games``, ``dealer`` and ``previous_fool``."""
    score = data.get("series")
    if not isinstance(score, dict) or not all(isinstance(n, int) for n in score.values()):
        return data
    return _nest({**data, "score": score, "series": {}}, "series", Series)


class Table(BaseModel):
    """One table's whole state as stored in Redis (see :mod:`bot.core.store`): the game
    and its series, with a part for each layer that keeps its own state there."""

    game_id: str
    chat_id: int
    thread_id: int | None = None
    # An inline table's message (None: a group's or a private chat's table, which the bot
    # posts in that chat itself).
    inline: Inline | None = None
    chat_title: str = ""
    kind: GameKind | None = None
    phase: Phase = "pick"
    seats: list[Seat] = Field(default_factory=list)
    state: str | None = None  # engine JSON; hidden information, never rendered directly
    played: Played = Field(default_factory=Played)
    series: Series = Field(default_factory=Series)
    lobby: Lobby
    clock: TurnClock = Field(default_factory=TurnClock)
    delivery: Delivery = Field(default_factory=Delivery)
    version: int = Field(default=0, exclude=True)  # CAS version, stored beside the JSON

    @classmethod
    def from_stored(cls, raw: str | bytes) -> Table:
        """A table as stored (:mod:`bot.core.store`); raises ValueError when it does not
        validate.

        A table this version stored begins with its form (:data:`FORM_MARK`, which
        :meth:`to_stored` writes before the table's fields; no field of the table,
        pydantic skips it)
        and is read as it is, pydantic's own parser alone: loading a table is the first
        step of every tap. Any other, a table an older version stored, is brought to the
        current form first (:func:`_table_form`), so that tables saved by the previous
        versions load and play on."""
        text = raw.encode() if isinstance(raw, str) else raw
        if text.startswith(_CURRENT):
            return cls.model_validate_json(text)
        return cls.model_validate(_table_form(json.loads(text)))

    def to_stored(self) -> str:
        """The table as the store keeps it: its JSON, its form first (:meth:`from_stored`)."""
        return FORM_MARK + self.model_dump_json()[1:]

    @property
    def private(self) -> bool:
        """A private chat's table: its owner alone plays there, against computer seats."""
        return self.chat_id > 0

    @property
    def counted_in(self) -> int:
        """The chat whose standings count this table's games: its own, or an inline
        table's chat (:func:`bot.core.callbacks.instance_chat`; 0, none, until a tap
        there named it)."""
        if self.inline is None:
            return self.chat_id
        instance = self.inline.chat_instance
        return callbacks.instance_chat(instance) if instance else 0

    def seat_of(self, user_id: int) -> int | None:
        for index, seat in enumerate(self.seats):
            if seat.user_id == user_id:
                return index
        return None


# How a table stored in the current form begins: Table.to_stored writes it before the
# table's fields, and Table.from_stored looks for it.
FORM_MARK: Final = f'{{"form":{FORM},'
_CURRENT = FORM_MARK.encode()


class Slot(BaseModel):
    """A message the bot keeps editing: its id, a hash of what it shows, and more.

    ``version`` is the table version it shows, so that an older render never overwrites a
    newer one; ``prompt`` says whether it carried move buttons (a new prompt is sent anew
    so that the phone rings); ``at`` is when it was last edited and ``phase`` the table
    phase it shows (group coalescing: a new phase is shown at once); ``game`` the game
    whose table it shows (a new game gets a new group message).
    """

    id: int | None = None
    hash: str = ""
    version: int = 0
    prompt: bool = False
    at: float = 0.0
    phase: str = ""
    game: str = ""
    # When he last stopped being asked to act (a hand: bot.service.messages.hand).
    quiet: float = 0.0
    renew: int = 0  # an ephemeral hand: the seat's ``renew`` it was sent for
