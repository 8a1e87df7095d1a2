"""Done once in the fork server of testing/botproc.py (its last preload), not at each bot's
start: the catalogues read (the command menu is set in every language), and the heap frozen,
which each fork's start-up collection (bot.app.freeze_startup_heap) would walk again."""

import gc

from bot.core.i18n import LANGS, catalogue

CATALOGUES = [catalogue(lang) for lang in LANGS]  # kept by i18n.load's cache from now on
gc.freeze()
