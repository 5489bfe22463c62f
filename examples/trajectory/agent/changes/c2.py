def words(s):
    return s.split()


def slugify(s):
    return "-".join(w.lower() for w in words(s))
