"""Test helpers, shared by tests/ and bench/ and shipped with neither the bot nor the wheel.

The fake Bot API (:mod:`testing.fakegram`, with the chats it keeps in
:mod:`testing.chats`, :mod:`testing.errors`, :mod:`testing.html` and
:mod:`testing.flood`; over HTTP :mod:`testing.fakeserver`), the
users' side of it (:mod:`testing.harness`, :mod:`testing.tabletop`,
:mod:`testing.computers`, :mod:`testing.webapp`), the clock a test moves forward
(:mod:`testing.clock`) and the bot's test settings (:mod:`testing.settings`).
"""
