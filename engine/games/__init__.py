"""The games, one package each: its rules, codecs, views, series and standings rules and
its computer player, exported as one :class:`engine.spec.GameSpec` by its ``spec`` module
(listed in :mod:`engine.registry`)."""
