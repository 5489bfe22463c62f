def words(s):
    return s.split()
