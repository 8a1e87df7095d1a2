"""The pieces of durak's computer player (:mod:`engine.games.durak.computer` plays its
levels): the heuristics, what a seat has seen and reads from play, the worlds it may be
in, the search and the endgame solver."""
