"""Standings: each finished game counted exactly once, per group and per person.

The figures are read back for /stats, and a group's standings can be rebuilt from game
records (``python -m bot.tables.stats``).

Its modules: :mod:`~bot.tables.stats.keys` (the Redis layout),
:mod:`~bot.tables.stats.finished` (a finished game, from a table or a record),
:mod:`~bot.tables.stats.count` (counting it once), :mod:`~bot.tables.stats.standings`
(the figures kept beside a store) and the command line in ``__main__``.
"""
