def words(s):
    return s.split()


def slugify(s):
    return "-".join(w.lower() for w in words(s))


def count_words(s):
    counts = {}
    for w in words(s):
        counts[w.lower()] = counts.get(w.lower(), 0) + 1
    return counts
