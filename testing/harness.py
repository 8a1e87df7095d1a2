"""The users' side of the fake Bot API: users and groups playing against the bot, which
is started and stopped as ``run_polling`` does.

:class:`Harness` feeds ``process_update`` updates built exactly as Telegram sends them.
:func:`harness_on` gives a test the bot, built with the settings its
``@pytest.mark.settings(...)`` names, and fails it on teardown on :meth:`Harness.problems`
unless it is marked ``@pytest.mark.telegram_complaints``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlparse

from telegram import Update
from telegram.ext import Application

from bot import inbox
from testing.chats import (
    BOT_ID,
    BOT_USERNAME,
    Answer,
    Button,
    FakeDialog,
    FakeGroup,
    FakeMessage,
    FakeUser,
)
from testing.errors import NOT_MODIFIED
from testing.fakegram import ARRIVED, TAG, FakeRequest, FakeTelegram
from testing.fakeinline import Shown, chat_instance
from testing.html import command_entities
from testing.settings import settings

if TYPE_CHECKING:  # the harness runs outside pytest too (bench/)
    import pytest

    from testing.clock import Clock

# A line that is nothing but a dotted lowercase key, after any bullet or emoji.
_CATALOGUE_KEY = re.compile(r"^[^\w]*([a-z0-9_]+(?:\.[a-z0-9_]+)+)\s*$")
START_PAYLOAD = re.compile(r"[A-Za-z0-9_-]{1,64}")
AppFactory = Callable[..., Awaitable[Any]]
App = Application[Any, Any, Any, Any, Any, Any]

# Who an anonymous admin's messages come from.
ANONYMOUS = {
    "id": 1087968824,
    "is_bot": True,
    "first_name": "Group",
    "username": "GroupAnonymousBot",
}
Pick = str | Callable[[Button], bool] | int
BotChat = FakeGroup | FakeUser  # a chat the bot is in
Chat = BotChat | FakeDialog
ResultPick = int | str | Callable[[dict[str, Any]], bool]


class Harness:
    """Plays users and groups against one or more Applications sharing a FakeTelegram."""

    def __init__(self, server: FakeTelegram, apps: Iterable[App] = ()):
        self.server = server
        self.apps = list(apps)
        # Random bases: runs that share a Redis never share a chat nor an update id.
        base = random.randrange(10**8)
        self._update_ids = itertools.count(100_000 + base * 10**5)
        self._query_ids = itertools.count(1)
        self._user_ids = itertools.count(10**9 + base * 10)
        self._group_ids = itertools.count(base * 10 + 1)
        self.log_errors: list[logging.LogRecord] = []
        self.redis: Any = None  # the store the apps share, for tests that read the state
        self.delivered: list[dict[str, Any]] = []  # every update, as sent
        self.fanout: list[App] = []  # set: each update goes to all of these, as to workers
        # (kind of update, seconds from its arrival to the end of its handling): the bench's
        self.durations: list[tuple[str, float]] = []

    @property
    def app(self) -> App:
        return self.apps[0]

    # ----- the world

    def user(
        self,
        first_name: str,
        *,
        language_code: str | None = "en",
        started: bool = True,
        username: str | None = None,
        user_id: int | None = None,
    ) -> FakeUser:
        user = FakeUser(user_id or next(self._user_ids), first_name, language_code, username)
        user.started = started
        return self.server.add_user(user)

    def group(
        self,
        title: str = "Card night",
        *,
        creator: FakeUser | None = None,
        admins: Iterable[FakeUser] = (),
        forum: bool = False,
        kind: str = "supergroup",
        username: str | None = None,
        bot: bool = True,
    ) -> FakeGroup:
        """A group; ``bot`` False: one the bot was never added to (inline mode only)."""
        number = next(self._group_ids)
        chat_id = -1_001_000_000_000 - number if kind == "supergroup" else -100_000 - number
        return self.server.add_group(
            FakeGroup(
                id=chat_id,
                title=title,
                type=kind,
                is_forum=forum,
                creator=creator.id if creator else None,
                admins={a.id for a in admins},
                username=username,
                has_bot=bot,
            )
        )

    def dialog(self, a: FakeUser, b: FakeUser) -> FakeDialog:
        """A private chat between two users: the bot reaches it through inline mode only."""
        return self.server.add_dialog(a, b)

    async def upgrade(self, group: FakeGroup, *, notices: bool = True) -> FakeGroup:
        """A basic group becomes a supergroup (an admin turned on something only those
        have): a new chat id, and the old one refused with ``migrate_to_chat_id`` from
        now on. ``notices``: Telegram's two service messages, in the old chat and then in
        the new one (a bot that missed them learns of it from the refusal)."""
        assert group.type == "group" and group.creator is not None
        new = self.server.add_group(
            FakeGroup(
                id=-1_001_000_000_000 - next(self._group_ids),
                title=group.title,
                creator=group.creator,
                admins=set(group.admins),
                bot_is_admin=group.bot_is_admin,
            )
        )
        group.migrated_to = new.id
        if notices:
            await self.upgrade_notice(group, new, "to")
            await self.upgrade_notice(group, new, "from")
        return new

    async def upgrade_notice(self, old: FakeGroup, new: FakeGroup, which: str) -> None:
        """One of Telegram's two service messages of an upgrade: ``migrate_to_chat_id``
        in the old chat (``which`` "to"), ``migrate_from_chat_id`` in the new one."""
        assert old.creator is not None
        chat, other = (old, new) if which == "to" else (new, old)
        message = self.server.new_message(
            chat.id, self.server.users[old.creator].to_json(), text=None
        )
        message.deleted = True  # a service message, not something to tap
        data = {**message.to_json(), f"migrate_{which}_chat_id": other.id}
        await self.feed({"message": data})

    async def remove_bot(self, group: FakeGroup, by: FakeUser, *, status: str = "kicked") -> None:
        """``by`` removes the bot from ``group`` (``status`` "kicked", or "left"): the
        group refuses the bot from now on, and the bot gets its ``my_chat_member``."""
        group.kicked = True
        gone: dict[str, Any] = {"status": status, "user": self.server.bot_json_short()}
        if status == "kicked":
            gone["until_date"] = 0
        await self._member_change(group, by, {"status": "member", "user": gone["user"]}, gone)

    async def promote(self, group: FakeGroup, by: FakeUser, *, admin: bool = True) -> None:
        """``by`` makes the bot an administrator of ``group`` (``admin`` False: takes it
        back), and the bot gets its ``my_chat_member``."""
        group.bot_is_admin = True
        administrator = self.server._member(group, BOT_ID)
        group.bot_is_admin = admin
        member = {"status": "member", "user": self.server.bot_json_short()}
        old, new = (member, administrator) if admin else (administrator, member)
        await self._member_change(group, by, old, new)

    async def _member_change(
        self, group: FakeGroup, by: FakeUser, old: dict[str, Any], new: dict[str, Any]
    ) -> None:
        """The bot's ``my_chat_member``: ``by`` changed its membership of ``group``."""
        change = {"chat": group.chat_json(), "from": by.to_json(), "date": int(self.server.clock())}
        await self.feed(
            {"my_chat_member": {**change, "old_chat_member": old, "new_chat_member": new}}
        )

    def hands(self, user: FakeUser, group: FakeGroup) -> list[FakeMessage]:
        return self.server.ephemerals(group.id, user.id)

    def topic(self, group: FakeGroup, name: str) -> int:
        """Creates a forum topic; its id is the id of its service message, as on Telegram."""
        assert group.is_forum, "topics exist only in forum supergroups"
        message = self.server.new_message(group.id, self.server.bot_json_short(), text=None)
        message.deleted = True  # the service message is not something the bot posted
        group.topics[message.message_id] = name
        return message.message_id

    # ----- users acting

    async def send_text(
        self,
        user: FakeUser,
        chat: BotChat,
        text: str,
        *,
        thread: int | None = None,
        reply_to: FakeMessage | None = None,
        app: App | None = None,
    ) -> FakeMessage:
        """A text message from ``user`` (commands get their bot_command entity).

        ``reply_to``: sent as a reply. In a supergroup that is not a forum Telegram then
        sets ``message_thread_id`` (the reply thread) *without* ``is_topic_message``."""
        if isinstance(chat, FakeUser):
            assert chat.id == user.id, "a user writes only in his own private chat with the bot"
            user.started = True  # writing to the bot opens the private chat
            user.blocked = False
        if thread is not None:
            assert isinstance(chat, FakeGroup) and thread in chat.topics
        message = self.server.new_message(
            chat.id, user.to_json(), text=text, entities=command_entities(text), thread_id=thread
        )
        data = message.to_json()
        if reply_to is not None:
            data["reply_to_message"] = reply_to.to_json()
            if isinstance(chat, FakeGroup) and chat.type == "supergroup" and not chat.is_forum:
                data["message_thread_id"] = reply_to.message_id
        elif thread is not None:  # in a topic, what replies to nothing replies to its start
            assert isinstance(chat, FakeGroup)
            data["reply_to_message"] = {
                "message_id": thread,
                "date": message.date,
                "chat": chat.chat_json(),
                "message_thread_id": thread,
                "is_topic_message": True,
                "forum_topic_created": {"name": chat.topics[thread], "icon_color": 7322096},
            }
        await self.feed({"message": data}, app)
        return message

    async def as_group(self, group: FakeGroup, text: str) -> FakeMessage:
        """``text`` from an anonymous admin: Telegram sends it from GroupAnonymousBot,
        with the group itself as ``sender_chat``."""
        entities = command_entities(text)
        message = self.server.new_message(group.id, ANONYMOUS, text=text, entities=entities)
        await self.feed({"message": {**message.to_json(), "sender_chat": group.chat_json()}})
        return message

    async def command(
        self, user: FakeUser, chat: BotChat, text: str, *, mention: bool = False, **kw: Any
    ) -> FakeMessage:
        """``/cmd args`` in a chat (``kw``: :meth:`send_text`'s); ``mention`` writes
        ``/cmd@botname`` as group menus do."""
        assert text.startswith("/")
        if mention:
            word, _, rest = text.partition(" ")
            text = f"{word}@{BOT_USERNAME}" + (f" {rest}" if rest else "")
        return await self.send_text(user, chat, text, **kw)

    async def private(self, user: FakeUser, text: str, app: App | None = None) -> FakeMessage:
        return await self.send_text(user, user, text, app=app)

    async def follow(self, user: FakeUser, url: str) -> FakeMessage:
        """Opens a t.me deep link and presses START, as the Telegram client does."""
        parsed = urlparse(url if "://" in url else f"https://{url}")
        assert parsed.netloc in ("t.me", "telegram.me"), url
        assert parsed.path.strip("/") == BOT_USERNAME, f"deep link to another bot: {url}"
        payload = parse_qs(parsed.query).get("start", [""])[0]
        assert START_PAYLOAD.fullmatch(payload), f"Telegram rejects start payload {payload!r}"
        return await self.private(user, f"/start {payload}")

    async def tap(
        self, user: FakeUser, message: FakeMessage, pick: Pick, app: App | None = None
    ) -> Answer:
        """Taps a button that ``user`` sees on ``message`` (label, predicate or index)."""
        assert not message.deleted, "the message is gone; nobody can tap it"
        self.sees(user, message.chat_id)
        if message.receiver is not None:
            assert message.receiver_id == user.id, "an ephemeral message is its receiver's"
            assert not message.dropped, "the ephemeral message never reached him"
        button = self.find(message, pick)
        data, inline = button.callback_data, message.inline_message_id
        assert data is not None, f"{button.text!r} is no callback button"
        if inline is not None:  # sent via the bot: the query names it, no ``message``
            answer = Answer(user.id, data, chat_id=message.chat_id, inline_message_id=inline)
            return await self._callback(user, answer, {"inline_message_id": inline}, app)
        ephemeral = message.receiver is not None
        return await self.tap_data(
            user, message.chat_id, message.message_id, data, app, ephemeral=ephemeral
        )

    def sees(self, user: FakeUser, chat_id: int) -> None:
        """Fails unless ``user`` sees the chat (and so may tap its messages)."""
        if chat_id in self.server.users:
            assert chat_id == user.id, "nobody sees another user's private chat"
        elif chat_id in self.server.inline.dialogs:
            assert self.server.inline.dialogs[chat_id].has(user.id), "a private chat is its two's"
        elif (group := self.server.groups.get(chat_id)) and not group.username:
            assert user.id not in group.outsiders, "only members see a private group's messages"

    def find(self, message: FakeMessage, pick: Pick) -> Button:
        buttons = message.buttons
        if isinstance(pick, int):
            return buttons[pick]
        matches = [b for b in buttons if (b.text == pick if isinstance(pick, str) else pick(b))]
        assert matches, f"no button {pick!r} on message: {message.shown!r}"
        return matches[0]

    async def tap_data(
        self,
        user: FakeUser,
        chat_id: int,
        message_id: int,
        data: str,
        app: App | None = None,
        *,
        ephemeral: bool = False,
    ) -> Answer:
        """A callback query with any data, as a modified client could send it
        (``ephemeral``: ``message_id`` is the id of his ephemeral message there)."""
        if ephemeral:
            message = self.server.ephemeral.get((chat_id, user.id), {}).get(message_id)
        else:
            message = self.server.messages.get(chat_id, {}).get(message_id)
        if message is not None and not message.deleted:
            where = {"message": message.to_json()}
        else:  # Telegram's InaccessibleMessage
            where = {
                "message": {
                    "message_id": message_id,
                    "chat": self.server.chat_json(chat_id),
                    "date": 0,
                }
            }
        answer = Answer(user.id, data, chat_id=chat_id, message_id=message_id, ephemeral=ephemeral)
        return await self._callback(user, answer, where, app)

    async def _callback(
        self, user: FakeUser, answer: Answer, where: dict[str, Any], app: App | None
    ) -> Answer:
        query_id = str(next(self._query_ids) * 7919 + 4_000_000_000_000)
        query = {
            "id": query_id,
            "from": user.to_json(),
            "chat_instance": chat_instance(answer.chat_id or 0),
            "data": answer.data,
            **where,
        }
        answer.at = self.server.clock()
        self.server.note_tap(query_id, answer)
        await self.feed({"callback_query": query}, app)
        return answer

    # ----- inline mode (testing.fakeinline)

    async def inline(
        self, user: FakeUser, chat: Chat, text: str, offset: str = "", app: App | None = None
    ) -> Shown:
        """``user`` types ``@bot <text>`` in ``chat`` (a FakeUser: his own private chat with
        the bot) and sees the results: Telegram's cached ones, or the bot's answer to an
        ``inline_query`` (``offset``: the page he scrolled to)."""
        assert self.server.inline.mode, "inline mode is off: typing @bot sends nothing"
        inline = self.server.inline
        inline.chat_type(user, chat.id)  # he must be in that chat
        cached = inline.cached(user, text, offset)
        if cached is not None:
            return inline.see(user, chat.id, text, offset, cached, cached=True)
        asked = inline.ask(user, chat.id, text, offset)
        await self.feed({"inline_query": asked.to_json(user)}, app)
        return inline.see(user, chat.id, text, offset, asked.answer, cached=False)

    async def scroll(self, user: FakeUser, seen: Shown, app: App | None = None) -> Shown:
        """He scrolls to the end of ``seen``: the next page (its ``next_offset``)."""
        assert seen.next_offset, "no more results: the client asks for none"
        chat = self.server.chat(seen.chat_id)
        return await self.inline(user, chat, seen.query, seen.next_offset, app)

    async def pick(
        self, user: FakeUser, seen: Shown, which: ResultPick, app: App | None = None
    ) -> FakeMessage:
        """He picks a result he sees (index, id or predicate): its message is posted in
        the chat from him via the bot, and the bot gets its ``chosen_inline_result``
        (with inline feedback on)."""
        message, chosen = self.server.inline.post(user, seen, seen.result(which))
        if message.chat_id == user.id:  # his private chat with the bot: the bot gets it
            await self.feed({"message": message.to_json()}, app)
        if chosen is not None:
            await self.feed({"chosen_inline_result": chosen}, app)
        return message

    async def switch(
        self, user: FakeUser, message: FakeMessage, pick: Pick, app: App | None = None
    ) -> Shown:
        """He taps a ``switch_inline_query_current_chat`` button: ``@bot <its query>``
        is put in his input field in that chat, which sends the inline query."""
        self.sees(user, message.chat_id)
        button = self.find(message, pick)
        query = button.switch_inline_query_current_chat
        assert query is not None, f"{button.text!r} does not switch to inline mode"
        return await self.inline(user, self.server.chat(message.chat_id), query, app=app)

    def delete(self, user: FakeUser, message: FakeMessage) -> None:
        """``user`` deletes a message he sent (the bot's edits of it fail from then on)."""
        assert message.sender.get("id") == user.id, "a user deletes only his own messages"
        message.deleted = True

    def results_seen(self, user: FakeUser) -> list[Shown]:
        return [s for s in self.server.inline.shown if s.user_id == user.id]

    def via_bot(self, chat: Chat) -> list[FakeMessage]:
        """The live messages posted in ``chat`` from inline results, oldest first."""
        return [m for m in self.screen(chat.id) if m.via_bot is not None]

    async def feed(self, payload: dict[str, Any], app: App | None = None) -> None:
        """Delivers one update and waits for what it set off (tasks the handler created);
        one of a kind the bot's ``allowed_updates`` leaves out is never sent."""
        if not self.server.sends(next(iter(payload))):
            self.server.withheld.append(payload)
            return
        await self.deliver({"update_id": next(self._update_ids), **payload}, app)

    def keep_updates(self) -> list[dict[str, Any]]:
        """From now on the updates this harness makes (a user's messages and taps) are kept
        in the list returned rather than delivered: the test stores them itself."""
        kept: list[dict[str, Any]] = []

        async def keep(data: dict[str, Any], app: App | None = None) -> None:
            self.server.update_ids.add(data["update_id"])
            kept.append(data)

        self.deliver = keep  # type: ignore[method-assign]
        return kept

    async def deliver(self, data: dict[str, Any], app: App | None = None) -> None:
        """One update exactly as given: also how Telegram redelivers an update a webhook
        did not acknowledge (same update_id, same callback query id)."""
        apps = self.fanout or [app or self.app]
        self.server.update_ids.add(data["update_id"])
        if self.server.history:
            self.delivered.append(data)
        started = ARRIVED.get() or time.perf_counter()
        await asyncio.gather(*(a.process_update(Update.de_json(data, a.bot)) for a in apps))
        kind = next(k for k in data if k != "update_id")
        self.durations.append((TAG.get() or kind, time.perf_counter() - started))
        for a in apps:
            await settle(a)

    # ----- what users see

    def screen(self, chat: Chat | int, thread: int | None = None) -> list[FakeMessage]:
        """What everyone in the chat sees (an inline message and its edits too)."""
        chat_id = chat if isinstance(chat, int) else chat.id
        return self.server.screen(chat_id, thread)

    def last(self, chat: BotChat | int, thread: int | None = None) -> FakeMessage:
        messages = [m for m in self.screen(chat, thread) if m.from_bot]
        assert messages, "the bot has posted nothing there"
        return messages[-1]

    def with_button(
        self, chat: BotChat | int, pick: Pick, thread: int | None = None
    ) -> FakeMessage:
        """The newest bot message in the chat that shows the button ``pick``."""
        for message in reversed(self.screen(chat, thread)):
            try:
                self.find(message, pick)
            except (AssertionError, IndexError):
                continue
            return message
        raise AssertionError(f"no message with button {pick!r} in chat")

    def alerts(self, user: FakeUser) -> list[str]:
        """The answerCallbackQuery texts the user was shown (toasts and alerts)."""
        return [a.text for a in self.server.queries.values() if a.user_id == user.id and a.text]

    def last_document(self, chat: BotChat | int) -> tuple[str, bytes]:
        docs = [m for m in self.screen(chat) if m.document is not None]
        assert docs, "no document was sent there"
        return docs[-1].document["file_name"], docs[-1].document_bytes or b""  # type: ignore[index]

    def problems(self) -> list[str]:
        """What a real Telegram would have complained about, errors the bot logged, and
        catalogue keys shown raw."""
        out = []
        if self.server.not_modified:
            seen = "; ".join(self.server.unchanged[:5])
            out.append(f"{self.server.not_modified} edits changed nothing ({seen})")
        out += [f"unknown Bot API method {c.method}" for c in self.server.unknown_calls]
        out += [
            f"{c.method} refused: {c.error}"
            for c in self.server.calls
            if c.error and c.error.startswith("Bad Request") and c.error != NOT_MODIFIED
        ]
        out += [f"callback {a.data!r} never answered" for a in self.server.unanswered]
        out += [
            f"{next(iter(u))} update not sent: the bot's allowed_updates leaves it out"
            for u in self.server.withheld
        ]
        out += [
            f"inline query {q.query!r} never answered"
            for q in self.server.inline.queries.values()
            if q.answer is None
        ]
        out += [f"logged error: {r.getMessage()}" for r in self.log_errors]
        out += [f"untranslated: {key}" for key in self.untranslated()]
        return out

    def untranslated(self) -> list[str]:
        """Catalogue keys shown raw (a missing key shows itself): a line, label, alert or
        inline result that reads like ``illegal.some_code``."""
        shown: list[str] = [a.text for a in self.server.queries.values() if a.text]
        for chat in self.server.messages.values():
            for message in chat.values():
                if message.from_bot or message.via_bot is not None:
                    shown += (message.text or message.caption or "").splitlines()
                    shown += [b.text for b in message.buttons]
        for answer in self.server.inline.answers:
            for result in answer.results:
                shown += [result["title"], *result.get("description", "").splitlines()]
                shown += result["text"].splitlines()
            shown += [answer.button["text"]] if answer.button else []
        found = (_CATALOGUE_KEY.search(line) for line in shown)
        return sorted({k.group(1) for k in found if k})


def app_tasks(app: App) -> list[asyncio.Task[Any]]:
    """The tasks ``app`` started through ``Application.create_task`` still running."""
    tasks: set[asyncio.Task[Any]] = app._Application__create_task_tasks  # type: ignore[attr-defined]
    return [t for t in tasks if not t.done()]


def _stack_of(task: asyncio.Task[Any]) -> str:
    """Where ``task`` waits: its chain of awaited coroutines, outermost first."""
    lines = [task.get_name()]
    awaited: Any = task.get_coro()
    while awaited is not None:
        frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
        if frame is not None:
            lines.append(f"  {frame.f_code.co_filename}:{frame.f_lineno} {frame.f_code.co_name}")
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
    return "\n".join(lines)


async def settle(app: App) -> None:
    """Waits for the tasks an update set off."""
    for _ in range(50):
        await asyncio.sleep(0)
        pending = [t for t in app_tasks(app) if t is not asyncio.current_task()]
        if not pending:
            return
        await asyncio.gather(*pending, return_exceptions=True)


class ErrorCollector(logging.Handler):
    """Collects ERROR records (a handler exception PTB swallowed shows up here)."""

    def __init__(self, sink: list[logging.LogRecord]) -> None:
        super().__init__(logging.ERROR)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        self.sink.append(record)


async def start_app(app: App) -> None:
    """What bot.runner does before it serves: initialize, post_init, start, and then the
    webhook's worker (bot.inbox; in webhook mode only)."""
    await app.initialize()
    if app.post_init:
        await app.post_init(app)
    await app.start()
    inbox.start(app)


async def started_bot(
    server: FakeTelegram, redis: Any, clock: Clock, *, latency: float = 0.0, **overrides: Any
) -> App:
    """The bot on ``redis`` (the test settings with ``overrides``), talking to ``server``
    on ``clock``, started as bot.runner starts it. ``latency``: seconds a Bot API call takes."""
    from bot.app import build_application  # the bot's import, only where one is built

    request = FakeRequest(server, latency=latency)
    app = build_application(settings(**overrides), redis, request=request, clock=clock)
    clock.apps.append(app)
    await start_app(app)
    return app


STOP_WITHIN = 10.0  # seconds: a bot that takes longer to stop has work that never ends


async def stop_app(app: App) -> None:
    """Stops ``app`` as ``run_polling`` does; fails, naming what still runs, when
    ``Application.stop`` (which waits for every task the bot set off) does not return."""
    if app.running:
        stopping = asyncio.ensure_future(app.stop())
        done, _ = await asyncio.wait([stopping], timeout=STOP_WITHIN)
        if not done:
            stuck = "\n".join(_stack_of(t) for t in app_tasks(app))
            raise AssertionError(f"the bot did not stop within {STOP_WITHIN} s:\n{stuck}")
        stopping.result()
    from bot.core.services import KEY, services
    from testing.clock import Clock  # imports this module

    svc = services(app) if KEY in app.bot_data else None  # none in a bare app (tests/fakes)
    if svc is not None and isinstance(svc.clock, Clock):  # no job starts now (the app is
        await svc.clock.asleep(svc.pollers)  # stopped): those under way end first, uncut
    if app.post_stop:
        await app.post_stop(app)
    await app.shutdown()
    if app.post_shutdown:
        await app.post_shutdown(app)


def marked_settings(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The settings a test asks for, ``@pytest.mark.settings(name=value, ...)``, read by
    every harness fixture (:func:`harness_on`) so that none builds its bot ignoring them."""
    marker = request.node.get_closest_marker("settings")
    if marker is None:
        return {}
    if marker.args:
        raise TypeError(f"@pytest.mark.settings takes name=value only, not {marker.args!r}")
    return dict(marker.kwargs)


async def harness_on(
    request: pytest.FixtureRequest,
    server: FakeTelegram,
    make_app: AppFactory,
    redis: Any,
    **overrides: Any,
) -> AsyncIterator[Harness]:
    """The bot on ``redis`` (with the settings ``overrides``, then the test's own, its
    ``settings`` marker's), checked on teardown (see the module docstring)."""
    h = Harness(server)
    collector = ErrorCollector(h.log_errors)
    logging.getLogger().addHandler(collector)
    try:
        h.apps.append(await make_app(redis, **{**overrides, **marked_settings(request)}))
        h.redis = redis
        yield h
    finally:
        logging.getLogger().removeHandler(collector)
    if request.node.get_closest_marker("telegram_complaints") is None:
        problems = h.problems()
        assert problems == [], problems
