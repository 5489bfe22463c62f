from calc import ops


def test_add():
    assert ops.add(2, 3) == 5


def test_sub():
    assert ops.sub(5, 3) == 2
