from calc.ops import add


def total(items):
    result = 0
    for i in items:
        result = add(result, i)
    return "total: %d" % result
