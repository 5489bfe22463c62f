#!/usr/bin/env python3
"""A check in the team's own code: the answer states the order's total, computed from the
quantities and prices in the request (`2 x 12.50 EUR`, `4.90 EUR shipping`).

gauntlet writes one JSON document on stdin (the case, the answer, the trace) and reads one
JSON object on stdout: {"pass": bool, "score": 0-3 (optional), "evidence": "..."}.
A crash, a non-zero exit, a time-out or anything but that object is "not assessed".
"""
import json
import re
import sys

doc = json.load(sys.stdin)
request = doc["case"]["input"]
answer = doc["answer"]

items = [(int(q), float(p)) for q, p in re.findall(r"(\d+)\s*x\s*(\d+(?:\.\d+)?)", request)]
shipping = re.findall(r"(\d+(?:\.\d+)?)\s*EUR shipping", request)
total = sum(q * p for q, p in items) + sum(float(s) for s in shipping)
want = f"{total:.2f}"

stated = re.findall(r"\d+\.\d{2}", answer)
if want in stated:
    out = {"pass": True, "evidence": f"states the total {want} EUR"}
elif stated:
    out = {"pass": False, "score": 1, "evidence": f"states {', '.join(stated)}, the total is {want} EUR"}
else:
    out = {"pass": False, "evidence": f"states no total; it is {want} EUR"}
json.dump(out, sys.stdout)
