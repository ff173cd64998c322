"""Check every gold phrase of questions.jsonl against npm's docs folder: after white space is
collapsed, the phrase occurs exactly once in its file and in no other file (the rule of
../shared/benchmarks/docs-flask).

    python dev/docs-npm/check.py /usr/lib/node_modules/npm/docs/content
"""

import json
import sys
from collections import Counter
from pathlib import Path


def main(docs: Path) -> int:
    texts = {p.relative_to(docs).as_posix(): " ".join(p.read_text(encoding="utf-8").split())
             for p in sorted(docs.rglob("*.md"))}
    questions = [json.loads(line) for line in open(Path(__file__).with_name("questions.jsonl"), encoding="utf-8")]
    bad = 0
    for q in questions:
        for fact in q["facts"]:
            phrase = " ".join(fact["phrase"].split())
            elsewhere = [f for f, t in texts.items() if f != fact["file"] and phrase in t]
            if texts.get(fact["file"], "").count(phrase) != 1 or elsewhere:
                print(f"{q['id']}: {fact['file']}: not exactly once, or also in {elsewhere[:3]}: {phrase}")
                bad += 1
    used = Counter(f["phrase"] for q in questions for f in q["facts"])
    bad += sum(1 for n in used.values() if n > 1)
    print(f"{len(questions)} questions, {sum(used.values())} facts, {dict(Counter(q['type'] for q in questions))}; "
          f"{'all phrases hold' if not bad else f'{bad} problems'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
