"""Standings: each finished game counted exactly once, per group and per person; the
figures read back; a group's standings rebuilt from records (``python -m bot.tables.stats``).

Its modules: :mod:`~bot.tables.stats.keys` (the Redis layout),
:mod:`~bot.tables.stats.finished` (a finished game, from a table or a record),
:mod:`~bot.tables.stats.count` (counting it once), :mod:`~bot.tables.stats.standings`
(the figures kept beside a store) and the command line in ``__main__``.
"""
