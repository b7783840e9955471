"""Pygments' regular-expression lexers, run with each state's rules as one expression.

Pygments lexes by trying a state's rules one after the other at each position until one
matches: ~36 calls into the regular-expression engine per token of Python, most of the
time the export of a long session took. Here a state's rules are joined into one
alternation, each rule marked by a group of its own: the engine tries them in the same
order and stops at the same first rule that matches, in one call, and the group that took
part says which rule it was (a rule with callbacks is matched again alone, for its
groups). The tokens are Pygments' own, the same as its loop makes (tested on the lexers
a session's code meets most). A state whose rules cannot be joined (a back reference, an
expression that does not compile joined) is lexed Pygments' way; so is a lexer that
lexes its own way.

Each state's expression is compiled the first time the state is entered (5-12 ms for
Python's large ones, 43 ms for the states ordinary Python enters, once per process). That
pays only once a lexer has much to do: a lexer class lexes its first JOIN_AFTER
characters Pygments' way (a few cards on screen, a short session's export never compile
anything), and what comes after through joined states.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from pygments.lexer import Lexer, RegexLexer, RegexLexerMeta
from pygments.token import Error, Whitespace, _TokenType

Match = Callable[[str, int], "re.Match[str] | None"]
Rule = tuple[Match, Any, Any]  # (match, action, new state), as Pygments keeps them
Token = tuple[int, Any, str]
#: a state joined: its expression's match, and the rule each group index stands for
Joined = tuple[Match, list[int]]

#: what a joined expression cannot hold: back references (they would count the other
#: rules' groups), conditional groups
_UNJOINABLE = re.compile(r"\\[1-9]|\(\?P=|\(\?\(")
#: flags a rule sets for itself at its start (`(?i)`): joined, they apply to its group alone
_OWN_FLAGS = re.compile(r"^\(\?([aimsux]+)\)")
#: what a lexer class lexes Pygments' way before its states are joined: about what joining
#: Python's states costs in time, lexed (its joined states lex ~1.7x faster)
JOIN_AFTER = 64_000


class Plans:
    """A lexer class's joined states (each state entered so far; None: lexed rule by
    rule), and how much text it has lexed Pygments' way."""

    def __init__(self, join_after: int) -> None:
        self.states: dict[str, Joined | None] = {}
        self.join_after = join_after
        self.lexed = 0


_PLANS: dict[type, Plans] = {}


def quicken(lexer: Lexer, plans: Plans | None = None) -> Lexer:
    """`lexer` itself, lexing through joined states once its class has lexed JOIN_AFTER
    characters, when it is a plain regex lexer (it keeps Pygments' loop and compiles its
    rules the way Pygments does). `plans`: its own instead of its class's."""
    cls = type(lexer)
    if (not isinstance(lexer, RegexLexer)
            or cls.get_tokens_unprocessed is not RegexLexer.get_tokens_unprocessed
            or getattr(type(cls), "_process_regex", None)
            is not getattr(RegexLexerMeta, "_process_regex", None)):
        return lexer
    if plans is None:
        plans = _PLANS.setdefault(cls, Plans(JOIN_AFTER))
    lexer.get_tokens_unprocessed = partial(_lex, lexer, plans)  # type: ignore[method-assign]
    return lexer


def _lex(lexer: RegexLexer, plans: Plans, text: str,
         stack: tuple[str, ...] = ("root",)) -> Iterator[Token]:
    if plans.lexed < plans.join_after:
        plans.lexed += len(text)
        return RegexLexer.get_tokens_unprocessed(lexer, text, stack)
    return tokens(lexer, plans.states, text, stack)


def join(rules: list[Rule], flags: int) -> Joined | None:
    """The rules of a state as one expression: rule i the i-th alternative, followed by an
    empty group of its own that closes last when it matches (`lastindex`). The group
    goes after the rule, not around it: an alternative that starts with a character or a
    set is then passed over on one look at the next character. None when they cannot be
    joined."""
    parts: list[str] = []
    owner: list[int] = [-1]
    for n, (match, _action, _new_state) in enumerate(rules):
        pattern = getattr(match, "__self__", None)
        source = getattr(pattern, "pattern", None)
        if not isinstance(source, str) or _UNJOINABLE.search(source):
            return None
        # a comment of a verbose rule must not swallow its group's end
        end = "\n)" if flags & re.VERBOSE else ")"
        own = _OWN_FLAGS.match(source)
        if own is not None:
            source = f"(?{own.group(1)}:{source[own.end():]}" + (
                "\n)" if "x" in own.group(1) else ")")
        parts.append(f"(?:{source}{end}()")
        owner += [-1] * int(pattern.groups) + [n]  # type: ignore[union-attr]
    try:
        joined = re.compile("|".join(parts), flags)
    except (re.error, OverflowError, RecursionError, ValueError):
        return None
    if joined.groups != len(owner) - 1:
        return None
    return joined.match, owner


def _rules(lexer: RegexLexer) -> dict[str, list[Rule]]:
    """The lexer's states, compiled by Pygments (on the class's first instance)."""
    found: dict[str, list[Rule]] = getattr(lexer, "_tokens")  # noqa: B009 (not typed)
    return found


def _plan(lexer: RegexLexer, plans: dict[str, Joined | None], state: str) -> Joined | None:
    if state not in plans:
        plans[state] = join(_rules(lexer)[state], lexer.flags)
    return plans[state]


def tokens(lexer: RegexLexer, plans: dict[str, Joined | None], text: str,
           stack: tuple[str, ...] = ("root",)) -> Iterator[Token]:
    """`RegexLexer.get_tokens_unprocessed`, each state's rules tried in one call."""
    pos = 0
    tokendefs = _rules(lexer)
    statestack = list(stack)
    statetokens: list[Rule] = tokendefs[statestack[-1]]
    joined = _plan(lexer, plans, statestack[-1])
    while True:
        m: re.Match[str] | None = None
        rule = -1  # the rule that matched; -1 not known yet, -2 none matches
        if joined is not None:
            m = joined[0](text, pos)
            rule = joined[1][m.lastindex or 0] if m is not None else -2
            if rule >= 0:
                rexmatch, action, new_state = statetokens[rule]
            else:
                m = None
        if rule == -1:  # a state not joined (or a match that did not say its rule)
            for found in statetokens:
                m = found[0](text, pos)
                if m is not None:
                    rexmatch, action, new_state = found
                    break
        if m is not None:
            if action is not None:
                if type(action) is _TokenType:
                    yield pos, action, m.group()
                else:  # a callback reads the rule's own groups
                    yield from action(lexer, rexmatch(text, pos) if rule >= 0 else m)
            pos = m.end()
            if new_state is not None:
                if isinstance(new_state, tuple):
                    for state in new_state:
                        if state == "#pop":
                            if len(statestack) > 1:
                                statestack.pop()
                        elif state == "#push":
                            statestack.append(statestack[-1])
                        else:
                            statestack.append(state)
                elif isinstance(new_state, int):
                    # pop, keeping at least one state (as Pygments does)
                    if abs(new_state) >= len(statestack):
                        del statestack[1:]
                    else:
                        del statestack[new_state:]
                elif new_state == "#push":
                    statestack.append(statestack[-1])
                else:
                    raise AssertionError(f"wrong state def: {new_state!r}")
                statetokens = tokendefs[statestack[-1]]
                joined = _plan(lexer, plans, statestack[-1])
            continue
        if pos >= len(text):
            break
        if text[pos] == "\n":  # at a line's end, back to the root state
            statestack = ["root"]
            statetokens = tokendefs["root"]
            joined = _plan(lexer, plans, "root")
            yield pos, Whitespace, "\n"
        else:
            yield pos, Error, text[pos]
        pos += 1
