from calc.ops import div


def test_div():
    assert div(7, 2) == 3.5


def test_div_by_zero():
    assert div(1, 0) is None
