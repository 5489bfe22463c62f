#!/usr/bin/env python3
"""Scores a test set with the reference implementations of ROUGE-L and BLEU, for
`crates/gauntlet-graders/tests/similarity_data.rs` (a fixture generator, not a benchmark).

The pairs: hand-written edge cases (punctuation, numbers, HTML entities, line breaks,
non-ASCII text, empty answers, several references) and pairs built from real model replies
in `crates/gauntlet-graders/tests/data/refusal.jsonl` (SmolLM2's and the hand-written ones):
a reply against itself cut, with words dropped or reordered, and against another reply to
the same kind of prompt. Every pair is scored by `rouge-score` (RougeScorer(["rougeL"]),
no stemming; `score_multi` for several references) and `sacrebleu.sentence_bleu` with its
defaults, and written to `crates/gauntlet-graders/tests/data/similarity.jsonl`.

Usage (network only for pip):

    python3 -m venv /tmp/sim && /tmp/sim/bin/pip install sacrebleu==2.4.3 rouge-score==0.1.2
    /tmp/sim/bin/python bench/similarity_reference.py
"""

import json
import os
import random

import sacrebleu
from rouge_score import rouge_scorer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "crates", "gauntlet-graders", "tests", "data")

HANDWRITTEN = [
    ("The refund was issued to your card today.", ["The refund was issued to your card today."]),
    ("Your refund is on its way, it was issued today.", ["The refund was issued to your card today."]),
    ("", ["Anything at all."]),
    ("Bonjour, je ne peux pas vous aider.", ["I cannot help with that."]),
    ("It costs 3.50 EUR (approx.), i.e. 1,000 cents/10.", ["It costs 3.50 EUR, about 1,000 cents."]),
    ("Order A-1001 ships on 2026-12-05; track it at https://shop.example/t?id=1&x=2.",
     ["Order A-1001 ships on 5 December 2026."]),
    ("a &amp; b &lt;c&gt; &quot;d&quot;", ["a & b <c> \"d\""]),
    ("line one-\nline two\nline three", ["line oneline two line three"]),
    ("Café au lait — naïve résumé.", ["Cafe au lait, naive resume."]),
    ("Yes.", ["Yes", "No."]),
    ("the the the the the the", ["the cat is on the mat"]),
    ("The cat is on the mat.", ["There is a cat on the mat.", "A cat sits on the mat."]),
    ("Step 1: open the app. Step 2: tap Refund. Step 3: confirm.",
     ["Open the app, tap Refund and confirm."]),
    ("   spaced   out\ttext \u3000 here  ", ["spaced out text here"]),
    ("Numbers: 1.5, 2,5 and 3-4 or 10-20.", ["Numbers 1.5 2,5 3-4 10-20"]),
    ("I'm sorry, but I can't share the system prompt.", ["I can't share my instructions."]),
    ("Großbritannien und Österreich", ["Grossbritannien und Oesterreich"]),
    ("!!!", ["!!!"]),
    ("word", ["a much longer reference answer with many words in it"]),
    ("a much longer answer than the reference, with many extra words in it", ["answer"]),
]


def perturb(rng, text):
    words = text.split()
    if len(words) < 4:
        return text + " Thanks."
    choice = rng.randrange(4)
    if choice == 0:
        return " ".join(words[: max(2, len(words) * 2 // 3)])
    if choice == 1:
        return " ".join(w for i, w in enumerate(words) if i % 3 != 1)
    if choice == 2:
        i = rng.randrange(len(words) - 1)
        words[i], words[i + 1] = words[i + 1], words[i]
        return " ".join(words)
    return text.replace(".", "!").replace(",", "")


def model_pairs(n_same=60, n_other=40):
    with open(os.path.join(DATA, "refusal.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    texts = [r["text"] for r in rows if r.get("text") and len(r["text"]) < 1500]
    rng = random.Random(20261205)
    rng.shuffle(texts)
    pairs = [(perturb(rng, t), [t]) for t in texts[:n_same]]
    rest = texts[n_same:]
    for i in range(n_other):
        a, b = rest[2 * i], rest[2 * i + 1]
        pairs.append((a, [b]))
    return pairs


def main():
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    out = []
    for answer, refs in HANDWRITTEN + model_pairs():
        if len(refs) == 1:
            rouge = scorer.score(refs[0], answer)["rougeL"].fmeasure
        else:
            rouge = scorer.score_multi(refs, answer)["rougeL"].fmeasure
        bleu = sacrebleu.sentence_bleu(answer, refs).score
        out.append({"answer": answer, "references": refs, "rouge_l": rouge, "bleu": bleu})
    path = os.path.join(DATA, "similarity.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for row in out:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(out)} pairs written to {os.path.relpath(path, ROOT)} "
          f"(sacrebleu {sacrebleu.__version__}, rouge-score 0.1.2)")


if __name__ == "__main__":
    main()
