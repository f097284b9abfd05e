"""Recursive-descent parser: Gremlin text -> gremlinpython Bytecode.

The parser drives gremlinpython's own ``GraphTraversalSource``, ``GraphTraversal`` and ``__`` objects,
calling for each step the method a Python user would call, so the bytecode is exactly what gremlinpython
records for the same traversal written in Python (steps under their Java names, anonymous traversals
nested as Bytecode, P/TextP/enum/strategy objects as gremlinpython builds them).

Grammar (informally)::

    script     := statement ((';' | newline) statement)*
    statement  := 'g' ('.' sourceStep args)* '.' spawnStep args ('.' step args)* ['.' terminal args]
                | 'g' '.' 'tx' '(' ')' '.' ('commit' | 'rollback') '(' ')'
    value      := literal | '[' list-or-map ']' | '{' set '}' | '(' value ')' | '__' ('.' step args)+
                | step args ('.' step args)*            (anonymous traversal without '__.')
                | [P. | TextP.] predicate args ('.' ('and'|'or') args)*
                | Enum '.' member | member | variable
                | [new] Strategy ['(' name ':' value, ... ')'] | Strategy '.instance()'
                | Strategy '.build()' ('.' option '(' value ')')* '.create()'
                | Cardinality '.' member '(' value ')' | Lambda '.' kind '(' script [, language] ')'
                | datetime '(' string ')' | UUID '(' string ')'
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from gremlin_python.process.graph_traversal import GraphTraversal, GraphTraversalSource, __
from gremlin_python.process.traversal import (
    Bytecode,
    CardinalityValue,
    P,
    TraversalStrategies,
    TraversalStrategy,
)

from lineage_platform.errors import GremlinSyntaxError
from lineage_platform.graph.gremlin_text import symbols, values
from lineage_platform.graph.gremlin_text.strategy import build_strategy
from lineage_platform.graph.gremlin_text.tokenizer import Kind, Token, syntax_error, tokenize

_LITERAL_NAMES: dict[str, Any] = {
    "true": True,
    "false": False,
    "null": None,
    "NaN": math.nan,
    "Infinity": math.inf,
}
_TRANSACTION_OPS = {"commit": Bytecode.GraphOp.commit, "rollback": Bytecode.GraphOp.rollback}


@dataclass(frozen=True)
class ParsedTraversal:
    """One parsed statement: its bytecode and the terminal method (with arguments) that ended it."""

    bytecode: Bytecode
    terminal: str | None = None
    terminal_args: tuple[Any, ...] = ()


class _Parser:
    """Holds the token stream and position; one method per grammar rule."""

    def __init__(self, text: str, bindings: Mapping[str, Any] | None) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.last = len(self.tokens) - 1  # the END token
        self.index = 0
        self.bindings: Mapping[str, Any] = bindings or {}

    # ---- token helpers -------------------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> Token:
        index = self.index + ahead
        return self.tokens[index] if index < self.last else self.tokens[self.last]

    def at(self, value: str, ahead: int = 0) -> bool:
        token = self.peek(ahead)
        return token.value == value and token.kind is Kind.PUNCT

    def advance(self) -> Token:
        token = self.peek()
        if self.index < self.last:
            self.index += 1
        return token

    def fail(self, token: Token, message: str, hint: str | None = None) -> NoReturn:
        raise syntax_error(self.text, token.offset, message, hint)

    def expect(self, value: str, context: str = "") -> Token:
        token = self.peek()
        if not (token.kind is Kind.PUNCT and token.value == value):
            where = f" {context}" if context else ""
            self.fail(token, f"expected '{value}'{where} but found {token.describe()}")
        return self.advance()

    def expect_name(self, what: str) -> Token:
        token = self.peek()
        if token.kind is not Kind.IDENT:
            self.fail(token, f"expected {what} but found {token.describe()}")
        return self.advance()

    # ---- statements ----------------------------------------------------------------------------------

    def script(self) -> list[ParsedTraversal]:
        statements: list[ParsedTraversal] = []
        while self.peek().kind is not Kind.END:
            if self.at(";"):
                self.advance()
                continue
            statements.append(self.statement())
            self.end_of_statement()
        return statements

    def end_of_statement(self) -> None:
        token = self.peek()
        if token.kind is Kind.END or token.newline_before:
            return
        if self.at(";"):
            self.advance()
            return
        self.fail(token, f"expected '.', ';' or a new line but found {token.describe()}")

    def statement(self) -> ParsedTraversal:
        start = self.expect_name("a traversal starting with 'g'")
        if start.value != "g":
            self.fail(
                start,
                f"expected a traversal starting with 'g' but found '{start.value}'",
                hint="write traversals as g.V()..., g.E()..., g.addV(...)... or g.inject(...)...",
            )
        source = GraphTraversalSource(None, TraversalStrategies())
        while True:
            self.expect(".", "after 'g'")
            name = self.expect_name("a source step such as V(), E(), addV() or withSideEffect()")
            if name.value == "tx":
                return self.transaction()
            method = symbols.step_method(name.value, symbols.SOURCE_STEPS)
            if method is not None:
                source = self.call(name, getattr(source, method), self.arguments())
                continue
            method = symbols.step_method(name.value, symbols.SPAWN_STEPS)
            if method is None:
                self.fail(
                    name,
                    f"unknown source step '{name.value}'",
                    hint=_suggest(name.value, [*symbols.SPAWN_STEPS, *symbols.SOURCE_STEPS]),
                )
            traversal = self.call(name, getattr(source, method), self.arguments())
            return self.top_level_chain(traversal)

    def transaction(self) -> ParsedTraversal:
        self.expect("(", "after 'tx'")
        self.expect(")", "after 'tx('")
        self.expect(".", "after 'tx()'")
        operation = self.expect_name("commit() or rollback()")
        if operation.value not in _TRANSACTION_OPS:
            self.fail(
                operation,
                f"unsupported transaction operation '{operation.value}'",
                hint="use g.tx().commit() or g.tx().rollback(); each statement already runs in its own "
                "transaction",
            )
        self.expect("(", f"after '{operation.value}'")
        self.expect(")", f"after '{operation.value}('")
        return ParsedTraversal(_TRANSACTION_OPS[operation.value]())

    def at_terminal(self) -> bool:
        """Whether '.terminal(' comes next (``toList``, ``next``, ...)."""
        name = self.peek(1)
        return self.at(".") and name.kind is Kind.IDENT and symbols.terminal_name(name.value) is not None

    def chain(self, traversal: GraphTraversal) -> GraphTraversal:
        """Apply '.step(args)' while they follow, stopping before a terminal step."""
        while self.at(".") and not self.at_terminal():
            self.advance()
            self.step(traversal, self.expect_name("a step name after '.'"))
        return traversal

    def top_level_chain(self, traversal: GraphTraversal) -> ParsedTraversal:
        """The steps of a statement and the terminal step that may end it."""
        self.chain(traversal)
        if not self.at_terminal():
            return ParsedTraversal(traversal.bytecode)
        self.advance()
        terminal = self.advance()
        return ParsedTraversal(
            traversal.bytecode, symbols.terminal_name(terminal.value), tuple(self.arguments())
        )

    def anonymous_chain(self, traversal: GraphTraversal) -> GraphTraversal:
        """The steps of a traversal nested as an argument, which no terminal step may end."""
        self.chain(traversal)
        if self.at_terminal():
            terminal = self.peek(1)
            self.fail(terminal, f"{terminal.value}() ends a whole traversal and cannot be used inside one")
        return traversal

    def step(self, traversal: GraphTraversal, name: Token) -> GraphTraversal:
        method = symbols.step_method(name.value, symbols.STEPS)
        if method is None:
            self.fail(name, f"unknown step '{name.value}'", hint=_suggest(name.value, symbols.STEPS))
        return self.call(name, getattr(traversal, method), self.arguments())

    def call(self, name: Token, method: Callable[..., Any], arguments: list[Any]) -> Any:
        try:
            return method(*arguments)
        except (TypeError, ValueError) as exc:
            self.fail(name, f"wrong arguments for {name.value}(): {exc}")

    # ---- arguments and values ------------------------------------------------------------------------

    def items(self, close: str, where: str, item: Callable[[], None]) -> None:
        """Parse ``item`` repeatedly, separated by ',', up to and including ``close``."""
        if self.at(close):
            self.advance()
            return
        while True:
            item()
            if self.at(close):
                self.advance()
                return
            if not self.at(","):
                self.fail(
                    self.peek(), f"expected ',' or '{close}' {where} but found {self.peek().describe()}"
                )
            self.advance()

    def arguments(self) -> list[Any]:
        self.expect("(", "to open the argument list")
        arguments: list[Any] = []
        self.items(")", "in the argument list", lambda: arguments.append(self.value()))
        return arguments

    def named_arguments(self, owner: Token) -> dict[str, Any]:
        """``(name: value, ...)`` as strategy constructors take them."""
        self.expect("(", f"after '{owner.value}'")
        named: dict[str, Any] = {}

        def option() -> None:
            key = self.expect_name(f"a configuration name for {owner.value} (name: value)")
            self.expect(":", f"after '{key.value}'")
            named[key.value] = self.value()

        self.items(")", f"in the options of {owner.value}", option)
        return named

    def value(self) -> Any:
        token = self.peek()
        if token.kind is Kind.NUMBER:
            return self.number(negative=False)
        if token.kind is Kind.STRING:
            return self.advance().value
        if token.kind is Kind.IDENT:
            return self.name_value()
        if self.at("-") or self.at("+"):
            return self.signed_number()
        if self.at("["):
            return self.list_or_map()
        if self.at("{"):
            return self.set_literal()
        if self.at("("):
            self.advance()
            inner = self.value()
            self.expect(")", "to close the parenthesis")
            return inner
        self.fail(token, f"expected a value but found {token.describe()}")

    def signed_number(self) -> Any:
        sign = self.advance()
        negative = sign.value == "-"
        if self.peek().kind is Kind.NUMBER:
            return self.number(negative=negative)
        if self.peek().kind is Kind.IDENT and self.peek().value == "Infinity":
            self.advance()
            return -math.inf if negative else math.inf
        self.fail(self.peek(), f"expected a number after '{sign.value}' but found {self.peek().describe()}")

    def number(self, *, negative: bool) -> Any:
        token = self.advance()
        try:
            return values.number(token.value, negative=negative)
        except ValueError as exc:
            self.fail(token, f"bad number {token.value}: {exc}")

    def list_or_map(self) -> list[Any] | dict[Any, Any]:
        self.expect("[")
        if self.at(":") and self.at("]", 1):
            self.advance()
            self.advance()
            return {}
        items: list[Any] = []
        entries: dict[Any, Any] = {}

        def element() -> None:
            key_token = self.peek()
            if key_token.kind is Kind.IDENT and self.at(":", 1):
                key: Any = self.advance().value  # [name: 1] means the string "name", as in Groovy
            else:
                key = self.value()
            if self.at(":"):
                if items:
                    self.fail(self.peek(), "a literal mixes list elements and map entries")
                self.advance()
                entries[self.hashable(key, key_token)] = self.value()
            elif entries:
                self.fail(self.peek(), f"expected ':' in a map literal but found {self.peek().describe()}")
            else:
                items.append(key)

        self.items("]", "in the list or map", element)
        return entries if entries else items

    def set_literal(self) -> set[Any]:
        opening = self.expect("{")
        items: set[Any] = set()

        def element() -> None:
            token = self.peek()
            try:
                item = self.value()
            except GremlinSyntaxError as exc:
                self.fail(
                    opening,
                    f"{{ }} must hold a set such as {{'a', 'b'}}: {exc.message}",
                    hint='Groovy closures are not supported: write Lambda.function("...")',
                )
            items.add(self.hashable(item, token))

        self.items("}", "in the set", element)
        return items

    def hashable(self, item: Any, token: Token) -> Any:
        try:
            hash(item)
        except TypeError:
            self.fail(
                token,
                f"{type(item).__name__} cannot be a map key or set element",
                hint="use strings, numbers or enums as map keys and set elements",
            )
        return item

    def name_value(self) -> Any:
        """A value starting with an identifier: keyword literal, enum, predicate, traversal, strategy, variable.

        Keywords (``true``, ``null``, ``new``, ``__``...) cannot be rebound; a bound variable is only a bare
        name (not followed by '.' or '('), and it wins over the unprefixed enum of the same name.
        """
        token = self.advance()
        name = token.value
        if name in _LITERAL_NAMES:
            return _LITERAL_NAMES[name]
        if name == "new":
            return self.strategy(self.expect_name("a strategy class after 'new'"))
        if name == "__":
            self.expect(".", "after '__'")
            return self.anonymous_chain(self.step(__.start(), self.expect_name("a step name")))
        if self.at("."):
            qualified = self.qualified_value(token)
            if qualified is not _NOT_QUALIFIED:
                return qualified
        elif self.at("("):
            return self.call_value(token)
        if name in self.bindings:
            return self.bindings[name]
        if name in symbols.BARE_ENUMS:
            return symbols.BARE_ENUMS[name]
        if name.endswith("Strategy"):
            return build_strategy(name, {})
        self.fail(
            token,
            f"unknown name '{name}'",
            hint=_suggest(name, [*symbols.BARE_ENUMS, *self.bindings])
            or "quote it if you meant a string, or bind it as a variable",
        )

    def qualified_value(self, owner: Token) -> Any:
        """``Owner.member`` forms: enums, predicates, constants, lambdas, strategies."""
        name = owner.value
        if name in symbols.ENUMS:
            members = symbols.ENUMS[name]
            member = self.member_after_dot(owner, members)
            if name == "Cardinality" and self.at("("):
                return self.cardinality_value(member, members[member.value])
            return members[member.value]
        if name in symbols.TOKEN_CLASSES:
            constants = symbols.TOKEN_CLASSES[name]
            return constants[self.member_after_dot(owner, constants).value]
        if name in symbols.PREDICATES:
            functions = symbols.PREDICATES[name]
            member = self.member_after_dot(owner, functions)
            return self.predicate(member, functions[member.value])
        if name == "Lambda":
            member = self.member_after_dot(owner, symbols.LAMBDA_FACTORIES)
            return self.script_lambda(member)
        if name.endswith("Strategy"):
            return self.built_strategy(owner)
        return _NOT_QUALIFIED

    def cardinality_value(self, member: Token, cardinality: Any) -> CardinalityValue:
        """``Cardinality.set("x")``: a value with the cardinality to write it with."""
        arguments = self.arguments()
        if len(arguments) != 1:
            self.fail(member, f"Cardinality.{member.value}() takes one value")
        return CardinalityValue(cardinality, arguments[0])

    def member_after_dot(self, owner: Token, members: Mapping[str, Any] | frozenset[str]) -> Token:
        self.expect(".")
        member = self.expect_name(f"a member of {owner.value}")
        if member.value not in members:
            self.fail(
                member, f"{owner.value} has no member '{member.value}'", hint=_suggest(member.value, members)
            )
        return member

    def call_value(self, token: Token) -> Any:
        """``name(...)``: datetime/UUID literals, bare predicates, strategies and anonymous traversals."""
        name = token.value
        if name in ("datetime", "UUID"):
            (text,) = self.literal_arguments(token, 1)
            convert = values.datetime_value if name == "datetime" else values.uuid_value
            try:
                return convert(text)
            except ValueError as exc:
                self.fail(token, f"bad {name} literal {text!r}: {exc}")
        if name.endswith("Strategy"):
            return self.strategy(token)
        if name == "not":
            arguments = self.arguments()
            if len(arguments) == 1 and isinstance(arguments[0], P):
                return self.predicate_connectives(P.not_(arguments[0]))
            return self.anonymous_chain(self.call(token, __.not_, arguments))
        if name in symbols.BARE_PREDICATES:
            return self.predicate(token, symbols.BARE_PREDICATES[name])
        if symbols.step_method(name, symbols.STEPS) is None:
            self.fail(
                token,
                f"unknown function or step '{name}'",
                hint=_suggest(name, [*symbols.STEPS, *symbols.BARE_PREDICATES]),
            )
        return self.anonymous_chain(self.step(__.start(), token))

    def literal_arguments(self, token: Token, count: int) -> list[str]:
        arguments = self.arguments()
        if len(arguments) != count or not all(isinstance(a, str) for a in arguments):
            self.fail(token, f"{token.value}() takes {count} string argument(s)")
        return arguments

    def predicate(self, token: Token, factory: Callable[..., P]) -> P:
        return self.predicate_connectives(self.call(token, factory, self.arguments()))

    def predicate_connectives(self, predicate: P) -> P:
        """``.and(P)`` / ``.or(P)`` chained onto a predicate."""
        while (
            self.at(".")
            and self.peek(1).kind is Kind.IDENT
            and self.peek(1).value in symbols.PREDICATE_CONNECTIVES
        ):
            self.advance()
            connective = self.advance()
            (other,) = self.predicate_arguments(connective)
            predicate = symbols.PREDICATE_CONNECTIVES[connective.value](predicate, other)
        return predicate

    def predicate_arguments(self, token: Token) -> list[P]:
        arguments = self.arguments()
        if len(arguments) != 1 or not isinstance(arguments[0], P):
            self.fail(token, f"{token.value}() takes one predicate, e.g. P.gt(1).{token.value}(P.lt(3))")
        return arguments

    def script_lambda(self, factory: Token) -> Callable[[], Any]:
        arguments = self.arguments()
        if not 1 <= len(arguments) <= 2 or not all(isinstance(a, str) for a in arguments):
            self.fail(factory, f"Lambda.{factory.value}() takes the script and optionally its language")
        return values.script_lambda(*arguments)

    def built_strategy(self, name: Token) -> TraversalStrategy:
        """Java-style ``ReadOnlyStrategy.instance()`` and ``SubgraphStrategy.build().vertices(...).create()``."""
        factory = self.member_after_dot(name, frozenset({"instance", "build"}))
        self.expect("(", f"after '{factory.value}'")
        self.expect(")", f"after '{factory.value}('")
        configuration: dict[str, Any] = {}
        while factory.value == "build":
            self.expect(".", f"after {name.value}.build()")
            option = self.expect_name(f"an option of {name.value} or create()")
            arguments = self.arguments()
            if option.value == "create" and not arguments:
                break
            if len(arguments) != 1:
                self.fail(option, f"{name.value}.build().{option.value}() takes one value")
            configuration[option.value] = arguments[0]
        try:
            return build_strategy(name.value, configuration)
        except ValueError as exc:
            self.fail(name, str(exc))

    def strategy(self, name: Token) -> TraversalStrategy:
        if not name.value.endswith("Strategy"):
            self.fail(
                name,
                f"'{name.value}' is not a traversal strategy",
                hint=_suggest(name.value, symbols.STRATEGIES),
            )
        configuration = self.named_arguments(name) if self.at("(") else {}
        try:
            return build_strategy(name.value, configuration)
        except ValueError as exc:
            self.fail(name, str(exc))


_NOT_QUALIFIED = object()


def _suggest(name: str, candidates: Any) -> str | None:
    """A 'did you mean' hint naming the closest known names, if any are close."""
    close = difflib.get_close_matches(name, list(candidates), n=3)
    return f"did you mean {', '.join(close)}?" if close else None


def parse_script(text: str, bindings: Mapping[str, Any] | None = None) -> list[ParsedTraversal]:
    """Parse every statement of ``text``; statements are separated by ';' or new lines.

    A new line does not end a statement while a bracket is open or when the next line starts with '.'
    (or the line ends with '.').

    >>> [p.terminal for p in parse_script("g.V().count().next()\\ng.E().toList()")]
    ['next', 'toList']

    Raises:
        GremlinSyntaxError: the text is not valid Gremlin; carries line, column and what was expected.
    """
    return _Parser(text, bindings).script()


def parse_traversal(text: str, bindings: Mapping[str, Any] | None = None) -> ParsedTraversal:
    """Parse one Gremlin traversal into gremlinpython bytecode.

    ``bindings`` maps variable names used in the text to their values.

    >>> parse_traversal("g.V().has('table', 'qualifiedName', x).in('usedBy')", {"x": "dw.orders"}).bytecode
    [['V'], ['has', 'table', 'qualifiedName', 'dw.orders'], ['in', 'usedBy']]

    Raises:
        GremlinSyntaxError: the text is not valid Gremlin or holds more or less than one traversal.
    """
    statements = parse_script(text, bindings)
    if len(statements) != 1:
        raise GremlinSyntaxError(
            f"expected one traversal, found {len(statements)}",
            line=1,
            column=1,
            text=text,
            hint="use parse_script for several statements"
            if statements
            else "write a traversal such as g.V()",
        )
    return statements[0]
