"""The pages' live updates: one subscription per process, and a bounded number of streams.

Live updates are server-sent events. Every commit's new version is published, once a
replica has it where there is one (:meth:`bot.core.store.Store.changes`); each process
holds one subscription to those notices for all its pages (:class:`Hub`), and loads a
table its pages watch once per new version, for all of them. So an update costs the
server one Redis read (an HGETALL; where replicas are awaited, with its barrier and
``WAIT`` in the same round trip: :func:`bot.webapp.api.load`) per process that has the
table open, however many pages there watch it, and nothing between changes: no page and
no table is polled. A subscription that breaks (Redis restarts) is made again, and every
watched table is read once then, since the notices sent meanwhile are lost: beside the new
notices and the new streams, which wait for none of it, :data:`CATCH_UP` tables at a time
(right after a failover each read may wait out ``REDIS_WAIT_MS``).

A page shows only what a replica holds: a read no replica confirmed in time (the table
had moved on since its notice, to a version only the primary has) ends the streams that
show the table, as an outage does, telling their pages to wait before they come back (a
``retry:`` line, :data:`BACK_OFF`): every page of the table hears it at once. They keep
what they show, say they are offline, and open their streams again after a growing wait
with jitter (static/live.js), each opening a read that waits for a replica again.

A stream holds a connection, a file and some memory for as long as it is open, so their
number is bounded (:class:`Streams`): a few per session and per user, the oldest closed
when a new one opens (a reloaded page opens a new one before the old one is noticed
gone), and a ceiling per process past which a new one is refused (503: the balancer, or
the page a second later, tries again). A stream also ends when its session does, and when
it has had nothing new to show for :data:`IDLE` seconds (the page opens it again; one that
went away without a word stops holding a connection).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from bot.core import metrics
from bot.core.health import PAUSES, UNREAD
from bot.core.replicas import Unconfirmed
from bot.core.services import AnyApp, services
from bot.core.store import Snapshot
from bot.webapp import api

# Seconds between two comments on a quiet event stream: proxies keep it open, and the page
# takes a stream that has said nothing for twice as long for dead (static/live.js, STALE).
KEEPALIVE = 5.0
IDLE = 5 * 60.0  # seconds without a new picture after which a stream ends
RETRY = 1.0  # seconds before a broken subscription is made again
PER_SESSION = 2  # live streams of one session (one page, reloaded)
PER_USER = 4  # of one user (his pages of several tables, on several devices)
PER_PROCESS = 500  # of everyone: a file each, well under the usual limit of 1024
CATCH_UP = 8  # tables read at once after the subscription was made again
# What a stream whose table could not be read as a replica holds says before it ends: the
# page's first wait (jittered by it) before it opens the stream again.
BACK_OFF = "retry: 1000\n\n"
K = TypeVar("K")

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Stream:
    """One open event stream: whose it is, and what wakes it (a change of its table, or
    its end)."""

    session: str
    user_id: int
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    ended: bool = False  # by a newer stream of the same page or user, or the server's stop
    unread: bool = False  # ended because its table's read failed: its page waits to reopen


class Streams:
    """The live streams of this process, bounded per session, per user and in all."""

    def __init__(self) -> None:
        self._by_session: dict[str, list[Stream]] = {}
        self._by_user: dict[int, list[Stream]] = {}
        self.live = 0

    def open(self, session: str, user_id: int) -> Stream | None:
        """A new stream, the oldest of the session or the user ended to make room for it;
        None when the process holds its ceiling of streams already."""
        mine = self._by_session.get(session, [])
        his = self._by_user.get(user_id, [])
        if len(mine) >= PER_SESSION:
            self.close(mine[0])
        elif len(his) >= PER_USER:
            self.close(his[0])
        elif self.live >= PER_PROCESS:
            return None
        stream = Stream(session, user_id)
        self._by_session.setdefault(session, []).append(stream)
        self._by_user.setdefault(user_id, []).append(stream)
        self.live += 1
        return stream

    def close(self, stream: Stream) -> None:
        """Ends ``stream`` (it wakes and stops) and frees its place; again: nothing."""
        if stream.ended:
            return
        stream.ended = True
        stream.wake.set()
        self.live -= 1
        _drop(self._by_session, stream.session, stream)
        _drop(self._by_user, stream.user_id, stream)


def _logged(task: asyncio.Task[None]) -> None:
    """A background task's error said when it ends, with its traceback, rather than lost
    (asyncio says it only once the task is collected, if at all)."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.error("%s failed", task.get_name(), exc_info=exc)


def _drop(index: dict[K, list[Stream]], key: K, stream: Stream) -> None:
    held = index[key]
    held.remove(stream)
    if not held:
        del index[key]


@dataclass
class _Watch:
    """One watched table in this process: its newest snapshot, and the streams that show it."""

    snap: Snapshot = field(default_factory=lambda: Snapshot(None, version=-1))  # not read yet
    pages: set[Stream] = field(default_factory=set)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one read at a time


class Hub:
    """The tables this process's pages watch, and the one subscription that tells it of
    their changes (see the module docstring)."""

    def __init__(self, application: AnyApp) -> None:
        self._app = application
        self._watches: dict[str, _Watch] = {}
        self._listener: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()
        self.streams = Streams()
        self.closed = False

    async def close(self) -> None:
        """The server stops: every page's stream ends now (its page reconnects, to another
        worker), rather than holding the shutdown up."""
        self.closed = True
        self._subscribed.set()  # a page waiting for Redis to come back waits no more
        for watch in self._watches.values():
            for stream in list(watch.pages):
                self.streams.close(stream)
        if self._listener is not None:
            self._listener.cancel()
            await asyncio.wait([self._listener])  # its end; a cancellation of ours goes on

    @contextlib.asynccontextmanager
    async def watch(self, key: str, stream: Stream) -> AsyncIterator[_Watch]:
        if self._listener is None or self._listener.done():  # not yet, or it failed
            self._listener = asyncio.create_task(self._listen(), name="webapp:changes")
            self._listener.add_done_callback(_logged)
        await self._subscribed.wait()
        watch = self._watches.setdefault(key, _Watch())
        watch.pages.add(stream)
        metrics.STREAMS.inc()
        try:
            if not self.closed:
                await self._read(key, watch, 0)
            yield watch
        finally:
            metrics.STREAMS.dec()
            self.streams.close(stream)
            watch.pages.discard(stream)
            if not watch.pages and self._watches.get(key) is watch:
                del self._watches[key]

    async def _read(self, key: str, watch: _Watch, version: int) -> None:
        """Load the table when what the watch holds is older than ``version``, and wake
        its pages."""
        async with watch.lock:
            if watch.snap.version >= version:
                return
            watch.snap = await api.load(self._app, key)
            for stream in watch.pages:
                stream.wake.set()

    async def _follow(self, key: str, watch: _Watch, version: int) -> None:
        """:meth:`_read` for the subscription: a table no replica confirmed in time ends
        the streams that show it (see the module docstring), and so does one whose read
        fails otherwise (:meth:`_broken`): the subscription goes on for the other tables."""
        try:
            await self._read(key, watch, version)
        except Unconfirmed:
            self._unread(key, watch)
        except PAUSES:
            raise  # an outage: the subscription is made again, and every table read
        except Exception:
            self._broken(key, watch)

    def _unread(self, key: str, watch: _Watch) -> None:
        """The table's read failed: its streams end, their pages told to wait before they
        reopen (see the module docstring), and the watch is forgotten, so that a stream
        opened meanwhile reads the table again rather than share what it holds."""
        for stream in list(watch.pages):
            stream.unread = True
            self.streams.close(stream)
        if self._watches.get(key) is watch:
            del self._watches[key]

    def _broken(self, key: str, watch: _Watch) -> None:
        """A read failed with an error that is no outage (a table this version cannot
        decode during a rolling deploy, ``WRONGTYPE``, ``NOPERM``): said once, with its
        traceback, and its pages told to wait and reopen, rather than left stale."""
        log.exception("the live pages of %s could not be updated", key)
        self._unread(key, watch)

    async def _catch_up(self) -> None:
        """Every watched table read once (the notices sent while there was no subscription
        are lost), :data:`CATCH_UP` at a time; one whose read fails ends its streams."""
        health = services(self._app).health
        limit = asyncio.Semaphore(CATCH_UP)

        async def one(key: str, watch: _Watch) -> None:
            async with limit:
                try:
                    await self._read(key, watch, watch.snap.version + 1)
                except UNREAD as exc:
                    health.failed(exc)  # reported once; its pages reopen and read it again
                    self._unread(key, watch)
                except Exception:
                    self._broken(key, watch)

        await asyncio.gather(*(one(key, watch) for key, watch in list(self._watches.items())))

    async def _listen(self) -> None:
        svc = services(self._app)
        while True:
            try:
                async with svc.store.changes() as changes:
                    self._subscribed.set()  # new pages wait for no catch-up
                    missed = asyncio.create_task(self._catch_up(), name="webapp:catch-up")
                    missed.add_done_callback(_logged)
                    try:
                        async for key, version in changes:
                            if watch := self._watches.get(key):
                                await self._follow(key, watch, version)
                    finally:
                        missed.cancel()
                        await asyncio.wait([missed])
            except PAUSES as exc:
                self._subscribed.clear()  # new pages wait for the subscription
                svc.health.failed(exc)  # reported once for the whole outage
                await asyncio.sleep(RETRY)

    def response(
        self,
        key: str,
        stream: Stream,
        shown: Callable[[Snapshot], dict[str, Any] | None],
        until: float,
        clock: Callable[[], float],
    ) -> StreamingResponse:
        """The event stream of one page: ``shown`` of each new version of table ``key``,
        keep-alives between, until the session ends (``until``), the stream has been idle
        for :data:`IDLE` seconds, or it is ended by a newer one or by the server."""

        async def lines() -> AsyncIterator[str]:
            try:
                async with self.watch(key, stream) as watch:
                    version = None
                    quiet_until = clock() + IDLE
                    while not (stream.ended or self.closed):
                        stream.wake.clear()
                        if watch.snap.version != version:
                            version = watch.snap.version
                            quiet_until = clock() + IDLE
                            yield f"data: {json.dumps(shown(watch.snap), ensure_ascii=False)}\n\n"
                            continue
                        wait = min(KEEPALIVE, until - clock(), quiet_until - clock())
                        if wait <= 0:
                            return
                        # asyncio.timeout, as 3.11's wait_for can lose the cancellation that
                        # comes when the page goes away
                        with contextlib.suppress(TimeoutError):
                            async with asyncio.timeout(wait):
                                await stream.wake.wait()
                            continue
                        yield ": keep-alive\n\n"
                if stream.unread:
                    yield BACK_OFF
            except UNREAD as exc:  # the table's first read
                services(self._app).health.failed(exc)  # reported once; the page reopens it
                yield BACK_OFF
            except Exception:  # a table that cannot be read: said, and the page waits
                log.exception("the live stream of %s failed", key)
                yield BACK_OFF

        return _EventStream(lines(), lambda: self.streams.close(stream))


class _EventStream(StreamingResponse):
    """Server-sent events, never buffered by a proxy; ``done`` runs once the response is
    over, however it ended (also when the page left before its first line). Its connection
    closes with it: a stream ended for a newer one gives back its file at once, rather than
    idling as a kept-alive connection."""

    def __init__(self, lines: AsyncIterator[str], done: Callable[[], None]) -> None:
        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no", "Connection": "close"}
        super().__init__(lines, media_type="text/event-stream", headers=headers)
        self._done = done

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._done()
