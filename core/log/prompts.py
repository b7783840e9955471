"""A prompt as the person typed it: what agents wrap around it read plainly.

Claude Code records a slash command as `<command-message>…</command-message>
<command-name>/init</command-name><command-args>…</command-args>` and surrounds prompts with
system noise (`<system-reminder>`, the local-command caveat, the output of `!` and local
commands in stdout wrappers). A person typed `/init args`; the rest is folded away. One
rule for the session list's titles, the transcript and the document exports. It lives
with the log because both the store's summaries and the readers above it use it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: wrappers whose content is folded away, with the label it is shown under
FOLDED = {
    "system-reminder": "System reminder",
    "local-command-caveat": "Caveat",
    "local-command-stdout": "Command output",
    "local-command-stderr": "Command errors",
    "bash-stdout": "Command output",
    "bash-stderr": "Command errors",
}
_COMMAND = ("command-name", "command-message", "command-args", "bash-input")
_NAMES = "|".join(re.escape(n) for n in (*_COMMAND, *FOLDED))
# a tag cut off by a shortened title (`<command-name>/init</command-na…`) runs to the end
_TAG = re.compile(rf"<({_NAMES})>(.*?)(?:</\1>|\Z)", re.S)


@dataclass
class Prompt:
    """`text`: what the person typed (`/init args` for a slash command); `folded`: the
    system noise around it as (label, content), shown folded if at all."""

    text: str
    folded: list[tuple[str, str]] = field(default_factory=list)
    command: str | None = None  # the slash command's name, `/init`


def read_prompt(text: str) -> Prompt:
    """`text` with its slash-command markup read as `/name args` and noise set apart."""
    if "<" not in text:
        return Prompt(text)
    found: dict[str, str] = {}
    folded: list[tuple[str, str]] = []

    def take(match: re.Match[str]) -> str:
        tag, body = match.group(1), match.group(2)
        if not match.group(0).endswith(f"</{tag}>"):  # cut off in a shortened title
            body = body.split("<", 1)[0].removesuffix("…")
        if tag in FOLDED:
            folded.append((FOLDED[tag], body.strip()))
        else:
            found.setdefault(tag, body.strip())
        return ""

    rest = _TAG.sub(take, text).strip()
    if not found and not folded:
        return Prompt(text)
    name = found.get("command-name")
    if name:
        name = name if name.startswith("/") else "/" + name
        said = " ".join(x for x in (name, found.get("command-args", "")) if x)
        rest = f"{said}\n\n{rest}" if rest else said
    elif "bash-input" in found:
        said = "! " + found["bash-input"]
        rest = f"{said}\n\n{rest}" if rest else said
    return Prompt(rest, folded, name or None)


def title_text(text: str) -> str:
    """A title or first question as the session list shows it: one line, a slash command
    as `/init args`, no system noise (titles shortened mid-tag included)."""
    if "<" not in text:
        return text
    shown = read_prompt(text).text
    return " ".join(shown.split()) or text


def names_question(title: str, question: str) -> bool:
    """Whether `title` is `question` as an importer shortens it into a title (whitespace
    folded, cut with "…"): a title that says nothing the question does not."""
    flat = " ".join(question.split())
    if not flat:
        return False
    if title == flat:
        return True
    cut = title.removesuffix("…").rstrip()
    return title.endswith("…") and bool(cut) and flat.startswith(cut)
