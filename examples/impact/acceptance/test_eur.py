from calc.fmt import total_eur


def test_total_eur():
    assert total_eur([1, 2, 3]) == "total: 6 EUR"
