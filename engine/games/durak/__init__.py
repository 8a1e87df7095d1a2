"""Durak with a dummy (seeds/durak.md); :mod:`.spec` is what the registry lists."""
