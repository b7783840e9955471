"""Checks of exported documents: the HTML parsed with a real parser (html.parser, every
element closed in order, void elements apart), no reference to anything outside the file,
and the CLI's export verb run in process."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import orjson

from forkwise.core.cli import main as cli

VOID = {"meta", "img", "br", "hr", "input", "link", "col", "wbr", "source"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    parent: Node | None
    children: list[Node] = field(default_factory=list)
    parts: list[str | Node] = field(default_factory=list)  # text and children, in order

    def all_text(self) -> str:
        return "".join(p if isinstance(p, str) else p.all_text() for p in self.parts)

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def ancestors(self) -> list[str]:
        out, at = [], self.parent
        while at is not None:
            out.append(at.tag)
            at = at.parent
        return out


class _Tree(HTMLParser):
    """Builds a tree and fails on a close tag that does not close the open element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.at = self.root
        self.nodes: list[Node] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, self.at)
        self.at.children.append(node)
        self.at.parts.append(node)
        self.nodes.append(node)
        if tag not in VOID:
            self.at = node

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, self.at)
        self.at.children.append(node)
        self.at.parts.append(node)
        self.nodes.append(node)

    def handle_endtag(self, tag: str) -> None:
        assert tag not in VOID, tag
        assert self.at.tag == tag, f"</{tag}> closes <{self.at.tag}>"
        assert self.at.parent is not None
        self.at = self.at.parent

    def handle_data(self, data: str) -> None:
        self.at.parts.append(data)


def parse(html: str) -> _Tree:
    tree = _Tree()
    tree.feed(html)
    tree.close()
    assert tree.at is tree.root, f"<{tree.at.tag}> never closed"
    return tree


def assert_self_contained(tree: _Tree, html: str) -> None:
    """No script, no style sheet or frame from elsewhere, every image a data URI, no CSS
    url(): the file reads the same offline. Links (<a href>) may point anywhere."""
    for node in tree.nodes:
        assert node.tag not in ("script", "link", "iframe", "object", "embed", "base"), node.tag
        for name, value in node.attrs.items():
            assert not name.startswith("on"), (node.tag, name)
            if name in ("src", "srcset", "poster", "data", "background"):
                assert value.startswith("data:"), (node.tag, name, value[:60])
            if name == "href":
                assert node.tag == "a", node.tag
    assert "url(" not in html.lower()
    assert "@import" not in html


def run_json(*argv: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--json"], out=out, err=err)
    return code, orjson.loads(out.getvalue() or "null")


def export(store: str, session_id: str, kind: str, out: Path, *extra: str) -> str:
    """Export through the CLI verb; the document's text."""
    code, made = run_json("sessions", "export", session_id, "--to", kind, "--out", str(out),
                          "--store", store, *extra)  # fmt: skip
    assert code == 0, made
    assert made["path"] == str(out)
    return out.read_text("utf-8")


def tool_cards(tree: _Tree) -> list[Node]:
    return [n for n in tree.nodes if n.tag == "div" and "tool" in n.classes()]


def walk(node: Node) -> list[Node]:
    """Every element under `node`, in document order."""
    out = []
    for child in node.children:
        out.append(child)
        out.extend(walk(child))
    return out
