"""fakeredis's Lua, each script compiled once per fake server rather than once per call,
and its globals looked over only when a script has made one.

fakeredis (2.41) runs every EVAL/EVALSHA with ``LuaRuntime.execute(script)``, which
compiles the text again each time: about 0.4 ms a call, a fifth of an in-process
end-to-end test's CPU. :func:`install` hands it a runtime whose ``execute`` keeps the
compiled chunk per script text; fakeredis still sets KEYS and ARGV before each call, and
a chunk run again has fresh locals. A script that does not compile goes to the plain
``execute``, so its error reads as before. fakeredis also lists every global before each
``redis.call`` to refuse a script that makes one, as Redis does (another fifth): here the
globals table notes an addition (its ``__newindex``), and fakeredis's own check runs only
then, with the same refusal at the same point (a ``rawset`` global slips by; no script
makes one).
"""

from __future__ import annotations

import types
from typing import Any

from fakeredis.commands_mixins import scripting_mixin

# Added to the globals table once fakeredis has set its own (redis, cjson, KEYS, ARGV):
# a function that says whether a global was added since it was last asked.
_NOTE_NEW_GLOBALS = """
local added = false
setmetatable(_G, {__newindex = function(t, k, v) added = true; rawset(t, k, v) end})
return function() local was = added; added = false; return was end
"""


def install() -> None:
    lua = scripting_mixin.LUA_MODULE
    if getattr(lua, "compiles_once", False):
        return

    class CompiledOnce(lua.LuaRuntime):  # type: ignore[name-defined,misc]
        def execute(self, lua_code: Any, *args: Any) -> Any:
            if "added" not in self.__dict__:  # the first script: fakeredis's globals are set
                self.added = super().execute(_NOTE_NEW_GLOBALS)
            chunks = self.__dict__.setdefault("chunks", {})
            chunk = chunks.get(lua_code)
            if chunk is None:
                try:
                    chunk = chunks[lua_code] = self.compile(lua_code)
                except lua.LuaSyntaxError:
                    return super().execute(lua_code, *args)
            return chunk(*args)

    check = scripting_mixin._check_for_lua_globals

    def check_when_added(lua_runtime: Any, expected_globals: set[Any]) -> None:
        added = lua_runtime.__dict__.get("added")
        if added is None or added():
            check(lua_runtime, expected_globals)

    shim = types.ModuleType(lua.__name__)
    shim.__dict__.update(vars(lua), LuaRuntime=CompiledOnce, compiles_once=True)
    scripting_mixin.LUA_MODULE = shim
    scripting_mixin._check_for_lua_globals = check_when_added
