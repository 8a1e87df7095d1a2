"""Test helpers, shared by tests/ and bench/ and shipped with neither the bot nor the wheel:
the fake Bot API (:mod:`testing.fakegram` and the modules it names), the users' side of it
(:mod:`testing.harness`, :mod:`testing.tabletop`), the clock a test moves forward
(:mod:`testing.clock`) and the bot's test settings (:mod:`testing.settings`).
"""

import os

# Hypothesis loads every plugin installed (trio's, here through selenium) when it is
# first imported; trio's registers its random generator, which costs a full garbage
# collection and a search of every object's referrers (about 0.3 CPU-s a worker). No
# test uses trio.
os.environ.setdefault("HYPOTHESIS_NO_PLUGINS", "1")
