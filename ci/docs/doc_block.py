#!/usr/bin/env python3
"""Prints one fenced code block of a Markdown file, for the scripts that run documented text as
written (ci/dist/dist-test.sh, examples/c/check.sh).

    ci/docs/doc_block.py FILE START LANG [VERSION]

The block is the first one whose info string's first word is LANG after the first line of FILE
that starts with START; VERSION, when given, replaces the word VERSION in it (the release
artifacts' names). Exits 1 with a message when there is no such line or block.
"""

import sys


def main(argv: list[str]) -> int:
    if len(argv) not in (4, 5):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path, start, lang = argv[1:4]
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    at = next((n for n, line in enumerate(lines) if line.startswith(start)), None)
    if at is None:
        print(f"error: {path} has no line starting with {start!r}", file=sys.stderr)
        return 1
    block = None
    for line in lines[at + 1 :]:
        if block is None:
            if line.startswith("```") and line[3:].split(" ")[0] == lang:
                block = []
        elif line.startswith("```"):
            text = "\n".join(block)
            if len(argv) == 5:
                text = text.replace("VERSION", argv[4])
            print(text)
            return 0
        else:
            block.append(line)
    print(f"error: {path} has no {lang} block after {start!r}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
