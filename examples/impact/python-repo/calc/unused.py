def never_tested():
    return 42
