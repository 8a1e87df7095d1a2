"""The game's bot folder: :mod:`.entry` is what the bot's registry lists."""
