"""What every bot process did at its start, done once in the fork server of testing/botproc.py
(its last preload): the catalogues read (the command menu), the heap frozen (for bot.app's gc)."""

import gc

from bot.core.i18n import LANGS, catalogue

CATALOGUES = [catalogue(lang) for lang in LANGS]  # kept by i18n.load's cache from now on
gc.freeze()
