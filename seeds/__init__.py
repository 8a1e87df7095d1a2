"""The rules texts, as the project implements them (/rules shows them: bot.core.rules_text).

A package of data alone, so that a wheel carries the texts and importlib.resources finds
them in the source tree and in an installed wheel alike.
"""
