"""Pure game logic for Belarusian football and durak (with a dummy, and the variants groups
play without one): no I/O of any kind."""
