"""Layer 1, the ground every other layer stands on: settings, texts, button codes, the
table's data model, Redis (store), Telegram (sender), the rate limits, and the per-
process Services.
"""
