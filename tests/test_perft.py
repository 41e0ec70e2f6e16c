"Perft from the start: the standard proof of a move generator."
import pytest

from santorini_az.game import initial_state, perft

KNOWN = {1: 25, 2: 600, 3: 13_800, 4: 303_600, 5: 17_252_928}


@pytest.mark.parametrize("depth", [1, 2, 3, 4, 5])
def test_perft_from_start(depth):
    assert perft(initial_state(), depth) == KNOWN[depth]
