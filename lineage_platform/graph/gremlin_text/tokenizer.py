"""Split Gremlin text into tokens, keeping each token's line and column for error messages.

Understands what Gremlin console users and TinkerPop's gremlin-lang scenarios type: identifiers,
numbers with Java type suffixes (``1l``, ``2.0d``, ``1n``, ``1m``), single- and double-quoted strings
with escapes, punctuation, ``//`` and ``/* */`` comments. Newlines are not tokens: each token records
whether a newline came before it, which the parser uses to end statements.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import NamedTuple

from lineage_platform.errors import GremlinSyntaxError


class Kind(Enum):
    """What a token is."""

    IDENT = "identifier"
    NUMBER = "number"
    STRING = "string"
    PUNCT = "punctuation"
    END = "end of input"


class Token(NamedTuple):
    """One token; ``value`` is the identifier, the punctuation, the decoded string or the number text."""

    kind: Kind
    value: str
    offset: int
    newline_before: bool = False

    def describe(self) -> str:
        """How the token reads in an error message."""
        if self.kind is Kind.END:
            return "end of input"
        if self.kind is Kind.STRING:
            return f"string {self.value!r}"
        return f"'{self.value}'"


class UnfinishedInputError(GremlinSyntaxError):
    """The text ends inside a string or comment: more input could complete it."""


_TOKEN = re.compile(
    r"""
      (?P<blank> (?: \s+ | //[^\n]* | /\*.*?\*/ )+ )
    | (?P<string> '(?:[^'\\]|\\.)*' | "(?:[^"\\]|\\.)*" )
    | (?P<number> (?: 0[xX][0-9a-fA-F]+ | \d+ (?:\.\d+)? (?:[eE][+-]?\d+)? ) [bBsSiIlLfFdDnNmM]? (?![\w$]) )
    | (?P<ident> [A-Za-z_$][\w$]* )
    | (?P<punct> [.,:;()\[\]{}+\-] )
    """,
    re.VERBOSE | re.DOTALL,
)
_KINDS = {"string": Kind.STRING, "number": Kind.NUMBER, "ident": Kind.IDENT, "punct": Kind.PUNCT}
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.DOTALL)
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "'": "'", "\\": "\\", "$": "$"}


def _unescape(body: str) -> str:
    """Decode the escapes of a string body; raises ValueError naming an unknown escape."""

    def replace(match: re.Match[str]) -> str:
        code = match.group(1)
        if len(code) == 5:
            return chr(int(code[1:], 16))
        if code not in _ESCAPES:
            raise ValueError(f"unknown escape \\{code} in string")
        return _ESCAPES[code]

    return _ESCAPE.sub(replace, body)


def position_of(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a character offset; computed only when an error is reported."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def syntax_error(
    text: str,
    offset: int,
    message: str,
    hint: str | None = None,
    error: type[GremlinSyntaxError] = GremlinSyntaxError,
) -> GremlinSyntaxError:
    """A syntax error positioned at ``offset`` of ``text``."""
    line, column = position_of(text, offset)
    return error(message, line=line, column=column, text=text, hint=hint)


def tokenize(text: str) -> list[Token]:
    """Tokens of ``text``, ending with one ``END`` token.

    >>> [t.value for t in tokenize("g.V(1l).out('knows')")]
    ['g', '.', 'V', '(', '1l', ')', '.', 'out', '(', 'knows', ')', '']

    Raises:
        GremlinSyntaxError: a character no token starts with, a malformed number or a bad escape;
            ``UnfinishedInputError`` (a subclass) when a string or comment is still open at the end.
    """
    tokens: list[Token] = []
    append = tokens.append
    position, newline_before = 0, False
    for match in _TOKEN.finditer(text):
        if match.start() != position:  # finditer skipped characters no token starts with
            raise _scan_error(text, position)
        group = match.lastgroup
        if group == "blank":
            newline_before = newline_before or "\n" in match.group()
        elif group == "string":
            value = match.group()[1:-1]
            if "\\" in value:
                try:
                    value = _unescape(value)
                except ValueError as exc:
                    raise syntax_error(text, position, str(exc), "write \\\\ for a backslash") from None
            append(Token(Kind.STRING, value, position, newline_before))
            newline_before = False
        else:
            append(Token(_KINDS[group], match.group(), position, newline_before))
            newline_before = False
        position = match.end()
    if position != len(text):
        raise _scan_error(text, position)
    append(Token(Kind.END, "", position, newline_before))
    return tokens


_OPERATOR_HINT = 'Groovy operators and closures are not supported: write a lambda as Lambda.function("...")'


def _scan_error(text: str, position: int) -> GremlinSyntaxError:
    """Why no token starts at ``position``."""
    char = text[position]
    if char in "'\"":
        message, hint = f"unterminated string, expected closing {char}", f"close the string with {char}"
        return syntax_error(text, position, message, hint, UnfinishedInputError)
    if text.startswith("/*", position):
        return syntax_error(text, position, "unterminated comment", "close it with */", UnfinishedInputError)
    if char.isdigit():
        return syntax_error(text, position, "malformed number", "number suffixes are b s i l f d n m")
    hint = _OPERATOR_HINT if char in "<>=!&|*/%?" else None
    return syntax_error(text, position, f"unexpected character {char!r}", hint)


_OPENING = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}


def needs_more_input(text: str) -> bool:
    """Whether ``text`` is an unfinished statement a console should keep reading lines for: a quote,
    comment or bracket is still open, or the last token is a '.' (the chain continues on the next line).

    >>> needs_more_input("g.V()."), needs_more_input("g.V().has('name',"), needs_more_input("g.V()")
    (True, True, False)
    """
    try:
        tokens = tokenize(text)
    except UnfinishedInputError:
        return True
    except GremlinSyntaxError:
        return False
    depth = sum(_OPENING.get(t.value, 0) for t in tokens if t.kind is Kind.PUNCT)
    last = tokens[-2] if len(tokens) > 1 else tokens[-1]
    return depth > 0 or (last.kind is Kind.PUNCT and last.value == ".")
