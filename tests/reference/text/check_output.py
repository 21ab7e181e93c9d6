#!/usr/bin/env python3
"""Compares what `tfm-run --generate N --text ...` printed (a file) with a
case of expected.json (generate.py): the prompt's ids, the streamed text and
the generated ids, exactly. Exit 1 with the difference otherwise.

    python3 check_output.py CASE OUTPUT
"""

import json
import os
import sys


def main():
    case, path = sys.argv[1], sys.argv[2]
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "expected.json"), encoding="utf-8") as f:
        want = json.load(f)[case]
    with open(path, "rb") as f:
        got = f.read().decode("utf-8")  # tfm-run prints only valid UTF-8
    ids = " ".join(map(str, want["generated_ids"]))
    expected = "tokens: [{}]\ntext: {}\n{}\nprefill: ".format(
        " ".join(map(str, want["prompt_ids"])), want["text"], ids)
    if not got.startswith(expected):
        print(f"{case}: tfm-run printed\n{got!r}\nexpected it to start with\n"
              f"{expected!r}")
        return 1
    print(f"{case}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
