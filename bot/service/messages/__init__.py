"""What the delivery (:mod:`bot.service.delivery`) does to each message of a table.

One pass (``rounds``) asks the rule of each kind of message what it is to become
(``message`` holds the words they share): the group's table (``table``), a seat's hand in
his private chat (``private_hand``) or in the group (``group_hand``), his turn wherever
his hand lives (``hand``), a watcher's hand (``watcher``), the place a hand has left
(``parked``), the removal of superseded messages (``cleanup``) and of the new ones of a
pass whose slots were lost (``unsaved``), and the Record button's document (``record``).
``calls`` makes the Bot API calls; ``refusals`` writes what Telegram's refusals mean for
the table; ``outcome`` is what a pass did and left.
"""
