from calc.ops import neg


def test_neg():
    assert neg(3) == -3
    assert neg(-1) == 1
