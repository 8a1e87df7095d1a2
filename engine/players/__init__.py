"""Computer players: what a seat would play, from exactly what that seat may know.

A player is given the seat's view (``game.view(seat)``), the legal moves (what the rules
allow is public), and the public events of the game so far; never the game itself.  So a
computer player cannot cheat by construction, and the bot can call it for a timed-out
human with nothing but what it already shows that human.  Same inputs, same move.

Each game's levels are listed by :mod:`engine.registry`; :mod:`engine.computer` asks it
for the player of a game and level.
"""
