"""Layer 3: what each reader sees, rendered from the engine's views only; registry lists
the games' screens.
"""
