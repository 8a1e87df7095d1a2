"""Layer 4, the table service: commit a change under compare-and-set, run the turn timers
and computer moves, bring every message up to date.
"""
