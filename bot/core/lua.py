"""Redis scripts whose arguments are named once: by the fields of a dataclass.

Why: a script sees its arguments as positions (``KEYS[3]``, ``ARGV[8]``), and a caller
that builds those lists by hand must keep them in the same order, with flags and
sentinels agreed by convention. Here each script declares its arguments as the fields of
a frozen dataclass (an :class:`Args`); both the Lua prologue that names them
(``local table_key, due_key = KEYS[1], KEYS[2]``) and the lists the caller sends are
made from that one declaration, so the two cannot disagree. What a field is follows
from its type:

- :data:`Key` (a ``str``) is one of KEYS; :data:`Keys` (the last key field) is the rest
  of KEYS, a Lua list;
- ``str`` (or ``bytes``), ``int``, ``bool``, ``int | None`` are one ARGV slot each,
  arriving in Lua as a string, a number, a boolean, or a number or nil;
- ``tuple[str, ...]`` (or of ``int``) is a list: its length travels first, then its items;
- ``tuple[R, ...]``, R a NamedTuple of the kinds above, is a list of rows, each a Lua
  table with R's field names;
- a nested :class:`Args` (a part several scripts share, such as a lease) puts its fields
  in place, under their own names.

The same scripts run on Redis and, in the tests, on fakeredis.

On a Redis Cluster a script may touch the keys of one hash slot only, and must name each
in KEYS (the node checks the slot of KEYS, not of a name the Lua builds). Where
``CARDTABLE_STRICT_SCRIPTS=1`` (the tests set it) every call checks both: its KEYS all
hash to one slot, and each key its Lua touches is one of KEYS (:data:`KEY_AT`); a call
that breaks either fails as it would on a cluster, whatever server runs it.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import os
import typing
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Generic, NamedTuple, TypeVar

import redis.asyncio as aioredis
from redis.crc import key_slot
from redis.exceptions import ResponseError

from bot.core.replicas import Replicas

_KEY = "one of KEYS"
Key = Annotated[str, _KEY]  # one of KEYS
Keys = Annotated[tuple[str, ...], _KEY]  # the rest of KEYS (the last key field)
Value = str | int | bytes


class _Field(NamedTuple):
    name: str
    kind: Any  # the field's type
    is_key: bool
    path: str  # how the arguments reach its value: "lease.holder.owner"


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, include_extras=True)


def _fields(cls: type, within: str = "") -> Iterator[_Field]:
    """The arguments of ``cls`` in order, nested Args flattened."""
    for f in dataclasses.fields(cls):
        kind, path = _hints(cls)[f.name], within + f.name
        if isinstance(kind, type) and issubclass(kind, Args):
            yield from _fields(kind, path + ".")
        elif typing.get_origin(kind) is Annotated:
            yield _Field(f.name, typing.get_args(kind)[0], _KEY in kind.__metadata__, path)
        else:
            yield _Field(f.name, kind, False, path)


class _Sent(NamedTuple):
    """One argument as a call sends it: how to get its value, and what it is."""

    get: Callable[[Any], Any]
    kind: Any  # the field's type
    is_key: bool
    many: bool  # a list: KEYS' rest, or ARGV's length and items


@functools.cache
def _sending(cls: type) -> tuple[_Sent, ...]:
    """The arguments of ``cls`` as :meth:`Args.lists` sends them, worked out once per
    class from its declaration (a script runs at every commit)."""
    return tuple(
        _Sent(operator.attrgetter(f.path), f.kind, f.is_key, _is_tuple(f.kind))
        for f in _fields(cls)
    )


def _is_tuple(kind: Any) -> bool:
    return typing.get_origin(kind) is tuple


def _item(kind: Any) -> Any:
    return typing.get_args(kind)[0]


def _is_row(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, tuple) and hasattr(kind, "_fields")


def _scalar(kind: Any, raw: str) -> str:
    """The Lua expression of one slot ``raw`` as a value of ``kind``."""
    if kind is bool:
        return f"({raw} == '1')"
    if kind is int or kind == int | None:
        return f"tonumber({raw})"  # '' (None) is nil
    if kind in (str, bytes):
        return raw
    raise TypeError(f"a script argument cannot be a {kind}")


def _read(target: str, kind: Any, depth: int = 0) -> list[str]:
    """Lua that reads a value of ``kind`` from the cursor into ``target``."""
    if not _is_tuple(kind):
        return [f"{target} = {_scalar(kind, 'next_arg()')}"]
    item, i = _item(kind), "ijk"[depth]
    lines = [f"{target} = {{}}", f"for {i} = 1, tonumber(next_arg()) do"]
    if _is_row(item):
        hints = _hints(item)
        lines.append(f"  local row{depth} = {{}}")
        for name in item._fields:
            lines += ["  " + line for line in _read(f"row{depth}.{name}", hints[name], depth + 1)]
        lines.append(f"  {target}[{i}] = row{depth}")
    else:
        lines += ["  " + line for line in _read(f"{target}[{i}]", item, depth + 1)]
    return [*lines, "end"]


def _locals(names: list[str], values: list[str]) -> list[str]:
    return [f"local {', '.join(names)} = {', '.join(values)}"] if names else []


def prologue(cls: type[Args]) -> str:
    """The Lua lines that name every argument of ``cls`` (see the module docstring)."""
    fields = list(_fields(cls))
    keys = [f for f in fields if f.is_key]
    fixed = [f for f in keys if not _is_tuple(f.kind)]
    lines = _locals([f.name for f in fixed], [f"KEYS[{n}]" for n in range(1, len(fixed) + 1)])
    for f in keys[len(fixed) :]:
        lines += [f"local {f.name} = {{}}", f"for i = {len(fixed) + 1}, #KEYS do"]
        lines += [f"  {f.name}[#{f.name} + 1] = KEYS[i]", "end"]
    args = [f for f in fields if not f.is_key]
    head = 0
    while head < len(args) and not _is_tuple(args[head].kind):
        head += 1
    slots = [_scalar(f.kind, f"ARGV[{n + 1}]") for n, f in enumerate(args[:head])]
    lines += _locals([f.name for f in args[:head]], slots)
    if head < len(args):
        lines.append(f"local argv_at = {head + 1}")
        lines.append("local function next_arg() argv_at = argv_at + 1 return ARGV[argv_at - 1] end")
        for f in args[head:]:
            first, *rest = _read(f.name, f.kind)
            lines += [f"local {first}", *rest]
    return "\n".join(lines) + "\n"


def _encode(kind: Any, value: Any) -> list[Value]:
    if _is_tuple(kind):
        item = _item(kind)
        out: list[Value] = [len(value)]
        for each in value:
            if _is_row(item):
                hints = _hints(item)
                for name in item._fields:
                    out += _encode(hints[name], getattr(each, name))
            else:
                out += _encode(item, each)
        return out
    return [_slot(value)]


def _slot(value: Value | None) -> Value:
    """One ARGV slot of a value that is not a list: None is '', a bool '1' or '0'."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    return value


@dataclass(frozen=True)
class Args:
    """A script's arguments (subclass it as a frozen dataclass; see the module docstring)."""

    def lists(self) -> tuple[list[str], list[Value]]:
        """KEYS and ARGV as the script's prologue reads them."""
        keys: list[str] = []
        argv: list[Value] = []
        cls: type = type(self)
        for sent in _sending(cls):
            value = sent.get(self)
            if sent.is_key:
                keys += value if sent.many else [value]
            elif sent.many:
                argv += _encode(sent.kind, value)
            else:
                argv.append(_slot(value))
        return keys, argv


A = TypeVar("A", bound=Args)

# Every script the bot runs (each module that makes one adds it when imported): what
# bot.core.connect loads on every primary at start.
SCRIPTS: list[Script[Any]] = []

CHECKED: Counter[str] = Counter()  # strict calls made, by the arguments' class name

# Where each command the scripts use names its key, for the strict check: the argument's
# place in redis.call (1: the command); 0: no key; -1: every argument after the command.
KEY_AT = {
    "DEL": -1,
    "EXISTS": -1,
    "EXPIRE": 2,
    "GET": 2,
    "HDEL": 2,
    "HEXISTS": 2,
    "HGET": 2,
    "HGETALL": 2,
    "HINCRBY": 2,
    "HMGET": 2,
    "HSET": 2,
    "PEXPIRE": 2,
    "PTTL": 2,
    "PUBLISH": 0,
    "SADD": 2,
    "SET": 2,
    "SISMEMBER": 2,
    "SMEMBERS": 2,
    "SREM": 2,
    "TTL": 2,
    "XGROUP": 3,
    "XINFO": 3,
    "ZADD": 2,
    "ZCARD": 2,
    "ZRANGE": 2,
    "ZREM": 2,
    "ZREMRANGEBYSCORE": 2,
    "ZREVRANK": 2,
    "ZSCORE": 2,
}

_STRICT_CALL = """
local declared = {}
for _, k in ipairs(KEYS) do declared[k] = true end
local key_at = {KEY_AT}
local function strict_call(command, ...)
  local args = {command, ...}
  local at = key_at[string.upper(command)]
  if at == nil then error('strict: ' .. command .. ' is not in lua.KEY_AT') end
  local first, last = at, at
  if at < 0 then first, last = 2, #args end
  for i = first, (at == 0) and -1 or last do
    if not declared[args[i]] then error('strict: undeclared key ' .. tostring(args[i])) end
  end
  return redis.call(command, ...)
end
""".replace("{KEY_AT}", "{" + ", ".join(f"{n} = {at}" for n, at in sorted(KEY_AT.items())) + "}")


def _strict() -> bool:
    return os.environ.get("CARDTABLE_STRICT_SCRIPTS") == "1"


def strict_source(source: str) -> str:
    """``source`` with every ``redis.call`` checked (see the module docstring)."""
    return _STRICT_CALL + source.replace("redis.call(", "strict_call(")


def check_slots(name: str, keys: list[str]) -> None:
    """Raise as a cluster would when ``keys`` are not all of one hash slot."""
    if len({key_slot(k.encode()) for k in keys}) > 1:
        raise ResponseError(f"CROSSSLOT {name}: keys in different slots: {keys}")
    CHECKED[name] += 1


@dataclass(frozen=True)
class Script(Generic[A]):
    """A script: its arguments' declaration, Lua shared with other scripts (functions
    that use the named arguments), and its body. Each one made is listed in
    :data:`SCRIPTS`."""

    args: type[A]
    body: str
    shared: str = ""

    def __post_init__(self) -> None:
        SCRIPTS.append(self)

    @property
    def source(self) -> str:
        return prologue(self.args) + self.shared + self.body

    @property
    def sent(self) -> str:
        """The source as Redis gets it (checked in the tests: :func:`strict_source`)."""
        return strict_source(self.source) if _strict() else self.source

    def register(
        self, redis: aioredis.Redis, replicas: Replicas | None = None
    ) -> Callable[[A], Awaitable[Any]]:
        """The script loaded on ``redis``: call it with its arguments. ``replicas``: each
        run is a write that waits for the replicas (bot.core.replicas)."""
        strict = _strict()
        script = redis.register_script(self.sent)
        name = self.args.__name__

        async def run(args: A) -> Any:
            keys, argv = args.lists()
            if strict:
                check_slots(name, keys)
            if replicas is not None:
                return await replicas.script(script, keys, argv)
            return await script(keys=keys, args=argv)

        return run
