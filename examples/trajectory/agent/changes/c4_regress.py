def words(s):
    return s.split()


def slugify(s, sep="_"):
    # The separator became an argument, but its default changed: "-" callers break.
    out = ""
    for i, w in enumerate(words(s)):
        if i > 0:
            if sep:
                out += sep
        out += w.lower()
    return out


def count_words(s):
    counts = {}
    for w in words(s):
        counts[w.lower()] = counts.get(w.lower(), 0) + 1
    return counts
