"""A script's arguments, declared once as a dataclass, reach its Lua under their names, for
every kind of field (keys, a nested part, flags, a number or none, lists, rows of rows)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import NamedTuple

import fakeredis
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.lua import Args, Key, Keys, Script


class Tag(NamedTuple):
    label: str
    weight: int


class Item(NamedTuple):
    name: str
    count: int
    on: bool
    spare: int | None
    tags: tuple[Tag, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Where(Args):
    first: Key
    at_ms: int


@dataclass(frozen=True)
class Echo(Args):
    where: Where
    second: Key
    rest: Keys
    flag: bool
    maybe: int | None
    names: tuple[str, ...]
    items: tuple[Item, ...]
    last: str


# Every value as Lua sees it, flattened into strings in declaration order.
ECHO = Script(
    Echo,
    body="""
local out = {}
local function put(v) out[#out + 1] = tostring(v) end
local function list(values) put(#values) for _, v in ipairs(values) do put(v) end end
put(first) put(second) list(rest) put(at_ms) put(flag) put(maybe) list(names)
put(#items)
for _, item in ipairs(items) do
  put(item.name) put(item.count) put(item.on) put(item.spare)
  put(#item.tags)
  for _, tag in ipairs(item.tags) do put(tag.label) put(tag.weight) end
  list(item.notes)
end
put(last)
return out
""",
)

numbers = st.integers(-(10**12), 10**12)
texts = st.text(max_size=8)
items = st.builds(
    Item,
    texts,
    numbers,
    st.booleans(),
    st.none() | numbers,
    st.lists(st.builds(Tag, texts, numbers), max_size=3).map(tuple),
    st.lists(texts, max_size=3).map(tuple),
)
# Keys of one hash slot, as every script's must be (bot.core.lua checks it in the tests).
keys = texts.map(lambda text: "{t}" + text)
echoes = st.builds(
    Echo,
    st.builds(Where, keys, numbers),
    keys,
    st.lists(keys, max_size=3).map(tuple),
    st.booleans(),
    st.none() | numbers,
    st.lists(texts, max_size=3).map(tuple),
    st.lists(items, max_size=3).map(tuple),
    texts,
)


def _lua(value: object) -> str:
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _expected(echo: Echo) -> list[str]:
    out = [echo.where.first, echo.second, str(len(echo.rest)), *echo.rest, str(echo.where.at_ms)]
    out += [_lua(echo.flag), _lua(echo.maybe), str(len(echo.names)), *echo.names]
    out.append(str(len(echo.items)))
    for item in echo.items:
        out += [item.name, str(item.count), _lua(item.on), _lua(item.spare), str(len(item.tags))]
        out += [x for tag in item.tags for x in (tag.label, str(tag.weight))]
        out += [str(len(item.notes)), *item.notes]
    return [*out, echo.last]


async def _run(echo: Echo) -> list[str]:
    redis = fakeredis.FakeAsyncRedis()
    try:
        got = await ECHO.register(redis)(echo)
    finally:
        await redis.aclose()
    return [raw.decode() for raw in got]


@settings(max_examples=20, deadline=None)
@given(echoes)
def test_every_argument_reaches_the_script_under_its_name(echo: Echo) -> None:
    assert asyncio.run(_run(echo)) == _expected(echo)


def test_the_prologue_names_each_argument_once() -> None:
    """The fixed arguments are read in one line each for KEYS and ARGV, as a reader of the
    script would write them by hand."""
    lines = ECHO.source.splitlines()
    assert lines[0] == "local first, second = KEYS[1], KEYS[2]"
    argv = "local at_ms, flag, maybe = tonumber(ARGV[1]), (ARGV[2] == '1'), tonumber(ARGV[3])"
    assert argv in lines
