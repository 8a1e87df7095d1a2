"""The Application: handlers, the store, the menu. ``build_application`` is also what the
end-to-end tests and the benchmark drive."""

from __future__ import annotations

import gc
import logging
from typing import Any

import httpx
import redis.asyncio as aioredis
from telegram import Update
from telegram.error import NetworkError, TelegramError
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    ChatMemberHandler,
    ChosenInlineResultHandler,
    CommandHandler,
    ContextTypes,
    InlineQueryHandler,
    MessageHandler,
    TypeHandler,
    filters,
)
from telegram.request import BaseRequest, HTTPXRequest

from bot import inbox
from bot.core import logs, metrics
from bot.core.callbacks import Action
from bot.core.clock import Clock
from bot.core.config import Settings
from bot.core.health import PAUSES, health_of
from bot.core.limiter import Limiter, SharedRateLimiter
from bot.core.metrics import Counted
from bot.core.replicas import Replicas, Unconfirmed
from bot.core.services import KEY, Services, every, guarded, services, stop_polls
from bot.core.store import RENEW_EVERY, Store
from bot.handlers import (
    commands,
    computer,
    inline,
    lobby,
    members,
    migrate,
    once,
    play,
    stats_commands,
)
from bot.service import delivery, migration, taps, turns
from bot.tables import layout

log = logging.getLogger(__name__)

DUE_POLL = 0.25  # seconds between two looks at the due set (a dead holder's work)

_TAPS: dict[Action, taps.TapHandler] = {
    Action.PICK: lobby.on_pick,
    Action.JOIN: lobby.on_join,
    Action.LEAVE: lobby.on_leave,
    Action.SETTINGS: lobby.on_settings,
    Action.OPTION: lobby.on_option,
    Action.START: lobby.on_start,
    Action.AGAIN: lobby.on_again,
    Action.MOVE: play.on_move,
    Action.SETUP: play.on_setup,
    Action.CARDS: play.on_cards,
    Action.RECORD: inline.on_record,
    Action.COMPUTER: computer.on_computer,
    Action.BACK: play.on_back,
    Action.PLACE: play.on_place,
    Action.QUIET: inline.on_quiet,
    Action.STANDINGS: inline.on_standings,
    Action.FORGET: stats_commands.on_forget,
}


async def on_tap(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    tap = await taps.parse(update)
    if tap is not None and tap.invited:
        await inline.on_invited(tap, context)
    if tap is not None:
        await _TAPS[tap.cb.action](tap, context)


async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    """What no handler caught. A write no replica confirmed in time is told so
    (bot.core.replicas: nothing of it is shown until it is confirmed); Redis not
    answering, or a failover under way, is an outage (bot.core.health: reported once, and
    the update is told to try again); an error Redis returned (a script's) is a bug like
    any other; Telegram not answering, or answering with something that is not JSON (a
    proxy's 502 page), is the network's weather: one line each. Anything else is a bug: a
    traceback."""
    error = context.error
    which = getattr(update, "update_id", "?")
    if isinstance(error, Unconfirmed):  # written, but no replica has it yet: not accepted
        await once.unavailable(update, unconfirmed=True)
    elif isinstance(error, PAUSES):
        services(context).health.failed(error)
        await once.unavailable(update)
    elif isinstance(error, NetworkError) or (
        isinstance(error, TelegramError) and isinstance(error.__cause__, ValueError)
    ):
        log.warning("update %s: the Bot API failed: %s", which, _short(error))
    else:
        log.error("update %s failed", which, exc_info=error)


def _short(error: TelegramError) -> str:
    """An error's message without the page a proxy may have answered with."""
    return error.message.split(". Parsing the server response", 1)[0][:200]


class _NotJson(logging.Filter):
    """PTB logs a Bot API answer that is not JSON as an error with a traceback, before
    raising the error that says so; that error is reported where it is caught."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Can not load invalid JSON data")


# One instance: the logger is global, and a filter already on it is not added again.
_NOT_JSON = _NotJson()


async def _post_init(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    svc = services(app)
    svc.bot_username = app.bot.username
    if not app.bot.supports_inline_queries:
        log.warning(
            "inline mode is off: games cannot be posted with @%s in other chats "
            "(@BotFather: /setinline, and /setinlinefeedback at 100%%)",
            svc.bot_username,
        )
    await commands.set_menu(app)
    try:
        await layout.upgrade(svc.store.redis)  # once, from an earlier version's keys
    except PAUSES as exc:  # Redis away at the start: the next start upgrades
        log.warning("redis: the key layout could not be checked: %s", exc)
    _poll(app)
    turns.poll(app)
    if svc.settings.http.webhook_url:
        inbox.open_(app)  # it reads once the Application runs (bot.runner)


async def _post_stop(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    # bot.runner drained the inbox within the grace; what is left now stays pending.
    await inbox.stop(app)
    await stop_polls(app)


async def _begin(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    logs.UPDATE_ID.set(update.update_id)
    metrics.started()


async def _handled(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Count the update by its kind."""
    kind = "other"
    if update.callback_query is not None or update.chosen_inline_result is not None:
        kind = "tap"
    elif update.inline_query is not None:
        kind = "query"
    elif update.my_chat_member is not None:
        kind = "member"
    elif update.message is not None:
        kind = "command" if (update.message.text or "").startswith("/") else "message"
    metrics.handled(kind)


def _poll(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """Messages left for later (coalesced, rate-limited, refused by flood control, or left
    by a process that died) are polled from Redis, and the leases of this process's
    deliveries are renewed (see bot.service.delivery)."""
    every(app, DUE_POLL, guarded(delivery.due_job))
    every(app, RENEW_EVERY, guarded(delivery.renew_job), first=RENEW_EVERY)


def _clients() -> tuple[BaseRequest, BaseRequest]:
    """PTB's two HTTP clients (Bot API calls, getUpdates; its pool sizes) with one TLS
    context between them: reading the CA bundle for each was a third of a start's CPU."""
    tls = {"verify": httpx.create_ssl_context()}
    return HTTPXRequest(256, httpx_kwargs=tls), HTTPXRequest(1, httpx_kwargs=tls)


def build_application(
    settings: Settings,
    redis: aioredis.Redis,
    request: BaseRequest | None = None,
    clock: Clock | None = None,
) -> Application[Any, Any, Any, Any, Any, Any]:
    """The bot; ``clock`` (bot.core.clock; the system's time by default) is what its store,
    limiter, pollers, turn timers and delivery read the time from and wait on: the tests
    move it instead of sleeping."""
    clock = clock or Clock()
    builder = ApplicationBuilder().token(settings.telegram.telegram_bot_token.get_secret_value())
    sent, polled = (request, request) if request is not None else _clients()
    builder = builder.request(sent).get_updates_request(polled)
    if settings.telegram.telegram_base_url:
        root = settings.telegram.telegram_base_url.rstrip("/")
        builder = builder.base_url(f"{root}/bot").base_file_url(f"{root}/file/bot")
    messages = settings.messages
    redis_limiter = (
        Limiter(redis, clock, messages.ephemeral_group_budget) if messages.rate_limit else None
    )
    # Every process keeps to Telegram's limits together (bot.core.limiter); a flood-control
    # answer comes straight back to the caller, who puts that message off. Every call is
    # counted around that (bot.core.metrics).
    shared = SharedRateLimiter(redis_limiter) if redis_limiter is not None else None
    builder = builder.rate_limiter(Counted(shared))
    logging.getLogger("telegram.request.BaseRequest").addFilter(_NOT_JSON)
    # Updates of different chats run side by side; one table's run one at a time per
    # process (a lock per table), and the CAS in Redis covers other processes.
    builder = builder.concurrent_updates(256).post_init(_post_init).post_stop(_post_stop)
    app = builder.build()
    replicas = Replicas(redis, settings.redis.redis_min_replicas, settings.redis.redis_wait_ms)
    store = Store(redis, settings.play.game_ttl, clock, replicas)
    svc = Services(
        app, settings, store, limiter=redis_limiter, clock=clock, follow=migration.follow
    )
    app.bot_data[KEY] = svc
    # On a cluster one node's outage ends once it answers; a backoff never reads a clock
    # that the system may step back.
    svc.health = health_of(redis, clock.monotonic)
    # First and last: each update is handled once (bot.handlers.once); before them the
    # update is named in the log lines of its handling, and counted once it is handled.
    app.add_handler(TypeHandler(Update, _begin), group=-2)
    app.add_handler(TypeHandler(Update, once.claim), group=-1)
    app.add_handler(TypeHandler(Update, once.done), group=1)
    app.add_handler(TypeHandler(Update, _handled), group=2)
    app.add_handler(CommandHandler("newgame", commands.newgame))
    app.add_handler(CommandHandler("endgame", commands.endgame))
    app.add_handler(CommandHandler("start", commands.start))
    app.add_handler(CommandHandler("help", commands.help_))
    app.add_handler(CommandHandler("rules", commands.rules))
    app.add_handler(CommandHandler("record", commands.record))
    app.add_handler(CommandHandler("stats", stats_commands.stats_command))
    app.add_handler(CommandHandler("forgetme", stats_commands.forgetme))
    app.add_handler(CallbackQueryHandler(on_tap))
    app.add_handler(InlineQueryHandler(inline.on_query))
    app.add_handler(ChosenInlineResultHandler(inline.on_chosen))
    app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, migrate.on_migrate))
    app.add_handler(ChatMemberHandler(members.on_my_chat_member, ChatMemberHandler.MY_CHAT_MEMBER))
    app.add_error_handler(on_error)
    return app


def freeze_startup_heap() -> None:
    """Leave what start-up built (modules, handlers, models) out of every later garbage
    collection. It lives as long as the process, and rescanning it in each full
    collection paused the event loop for tens of milliseconds, every few seconds under
    load: a p99 of the handling time (bench/bot.py)."""
    gc.collect()
    gc.freeze()
