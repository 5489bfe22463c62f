import unittest

from calc.fmt import total


class TestTotal(unittest.TestCase):
    def test_total(self):
        self.assertEqual(total([1, 2, 3]), "total: 6")
