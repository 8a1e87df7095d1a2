"""The games in the bot, one folder each (its screens, settings, texts and Mini App
drawing), each exporting its entry from its ``entry`` module, which
:mod:`bot.screens.registry` lists."""
