"""Full-width punctuation where YAML needs ASCII: `field：x` typed with a Chinese input method.

YAML reads only an ASCII `:` followed by a space as "key: value", so `{field：support_status, eq:
partial}` is one key `field：support_status` with no value, and the loader's complaint ("'eq' is
not a combinator", "unknown field 'support_status： partial'") never names the character at
fault. Whoever reports a key, a field or a line can ask here whether full-width punctuation
explains it, and say so.
"""
from __future__ import annotations

import re
import unicodedata

# full-width character -> the ASCII one YAML's syntax needs in its place
ASCII = {"：": ":", "，": ",", "｛": "{", "｝": "}", "［": "[", "］": "]", "－": "-", "　": " ",
         "＂": '"', "＇": "'", "＃": "#"}
# a key (an identifier at the start of a line, after a list dash, or after `{` or `,` in a flow
# mapping) followed by a full-width colon
_KEY_LINE = re.compile(r"(?:^\s*(?:-\s+)?|[{,]\s*)[A-Za-z_][A-Za-z0-9_.]*\s*：")


def found(text: object) -> str | None:
    """The first full-width punctuation character of `text` that YAML syntax needs in ASCII."""
    if not isinstance(text, str):
        return None
    return next((ch for ch in text if ch in ASCII), None)


def said(ch: str) -> str:
    """`'：' (U+FF1A FULLWIDTH COLON)`."""
    return f"'{ch}' (U+{ord(ch):04X} {unicodedata.name(ch, 'FULL-WIDTH CHARACTER')})"


def note(text: object) -> str | None:
    """A sentence naming the full-width character in a key or field, or None when it has none."""
    ch = found(text)
    if ch is None:
        return None
    return (f"it holds a full-width {said(ch)}, which YAML does not read as '{ASCII[ch]}': type the ASCII "
            f"'{ASCII[ch]}'" + (" followed by a space" if ch == "：" else ""))


def key_at(line: str) -> int:
    """The 0-based column of the full-width colon after a key on `line` (key_line must hold)."""
    m = _KEY_LINE.search(line)
    assert m is not None, "callers check key_line(line) first"
    return line.index("：", m.start())


def key_line(line: str) -> bool:
    """A YAML line whose key is followed by a full-width colon instead of ': '."""
    return bool(_KEY_LINE.search(line))


def fixed(text: str) -> str:
    """`text` with its full-width punctuation typed in ASCII (a colon followed by one space)."""
    out = "".join(ASCII.get(ch, ch) for ch in text)
    return re.sub(r":(?! )", ": ", out) if "：" in text else out


def fault_words(key: str) -> tuple[str, str]:
    """(message, hint) for a key holding full-width punctuation."""
    return (f"key '{key[:60]}' is not a key YAML can read as meant: {note(key)}",
            f"write: {fixed(key)[:60]}")
