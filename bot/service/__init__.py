"""Layer 4, the table service: the one write path, the turn timers, the delivery.

Committing a change under compare-and-set (``taps``), the moves nobody taps (``turns``)
and bringing every message up to date (``delivery``).
"""
