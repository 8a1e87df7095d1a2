"""Pure game logic for Belarusian football and Durak with a dummy: no I/O of any kind."""
