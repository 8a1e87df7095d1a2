"""Layer 2: a table's game through the engine, and the standings."""
