"""The fenced code blocks of a Markdown document, as the docs step runs them.

Blocks are found with markdown-it-py (a CommonMark parser), so an indented fence, a longer fence
or a fence inside a list is read as a renderer reads it. A block's info string is its language,
then optional words that tell the docs step how to run it:

    ```sh                      run (a shell block: bash -e -o pipefail, in the document's folder)
    ```c file=app.c            a file other blocks use: written before any block runs, and the
                               step checks that a block it runs names it
    ```sh background           started and left running (a server); the step waits for its port
    ```sh setup                run before every other block of every document (the first steps
                               that give the examples their server and user)
    ```sh prepare=store        run after a server has served and stopped on /var/lib/idforge
    ```xml fragment: WHY       not run, for the reason given (mandatory); its syntax is checked
                               where a checker exists (sh: bash -n; xml: a parser)
    ```text output             the output the block above it prints (doctest's ELLIPSIS: `...`
                               matches anything)

Everything else about a language (how a `js` or `ts` block is run) is the runner's
(docs_plugin.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt


@dataclass
class Block:
    """One fenced block: where it is, how it is marked, and the output shown under it."""

    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    words: dict[str, str] = field(default_factory=dict)
    fragment: str | None = None  # the reason, for a block marked `fragment: …`
    text: str = ""
    output: str | None = None  # the text of a `text output` block right after this one

    @property
    def name(self) -> str:
        """The file the block is written to: its `file=`, else one named by its line."""
        ext = {"sh": "sh", "python": "py", "js": "cjs", "mjs": "mjs", "ts": "ts", "sql": "sql"}
        return self.words.get("file") or f"block-{self.line}.{ext.get(self.lang, self.lang)}"


class MarkError(ValueError):
    """A block's info string the docs step cannot read."""


KNOWN_WORDS = {"file", "background", "setup", "prepare", "output"}


def parse_info(info: str) -> tuple[str, dict[str, str], str | None]:
    """Splits an info string into its language, its words and a fragment's reason."""
    fragment = None
    if "fragment:" in info:
        info, fragment = info.split("fragment:", 1)
        fragment = fragment.strip()
        if not fragment:
            raise MarkError("`fragment:` needs a reason after it")
    parts = info.split()
    lang = parts[0] if parts else ""
    words: dict[str, str] = {}
    for part in parts[1:]:
        key, _, value = part.partition("=")
        if key not in KNOWN_WORDS:
            raise MarkError(f"unknown word {part!r} in the info string (known: {sorted(KNOWN_WORDS)})")
        words[key] = value
    return lang, words, fragment


def read_blocks(path: Path) -> list[Block]:
    """Every fenced block of PATH in order; a `text output` block is attached to the one above."""
    tokens = MarkdownIt("commonmark").parse(path.read_text(encoding="utf-8"))
    blocks: list[Block] = []
    for tok in tokens:
        if tok.type != "fence":
            continue
        line = tok.map[0] + 1 if tok.map else 0
        try:
            lang, words, fragment = parse_info(tok.info)
        except MarkError as e:
            raise MarkError(f"{path}:{line}: {e}") from None
        if "output" in words:
            if not blocks or blocks[-1].output is not None:
                raise MarkError(f"{path}:{line}: an output block follows no block")
            blocks[-1].output = tok.content
            continue
        blocks.append(Block(path, line, lang, words, fragment, tok.content))
    return blocks
