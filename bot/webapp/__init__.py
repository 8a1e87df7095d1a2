"""The Mini App: the table drawn as cards in Telegram's web view, beside the buttons.

``auth`` checks Telegram's ``initData`` and the sessions it is traded for; ``api`` turns a
stored table into what one reader may see (from the engine's views only) and runs a move
from the page through the same code as a button tap; ``server`` is the one ASGI app
(webhook, page, API)."""
