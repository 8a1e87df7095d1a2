"""What every bot process does first, done once in the fork server of testing/botproc.py
(the last module it preloads), so that no fork does it again: the catalogues read (the
command menu names its commands in every language) and the heap so far frozen, which a
fork's start-up collection (bot.app.freeze_startup_heap) then need not walk."""

import gc

from bot.core.i18n import LANGS, catalogue

for _lang in LANGS:
    catalogue(_lang)
gc.freeze()
