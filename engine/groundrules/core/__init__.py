"""The engine: tables read with their positions, checked against their kinds, compiled into one
immutable Rulebook, and evaluated. It imports no part, store or surface."""
