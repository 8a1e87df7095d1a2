"""Belarusian football (seeds/football.md); :mod:`.spec` is what the registry lists."""
