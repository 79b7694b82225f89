"""One error type for every bad input, rendered as a single line.

The CLI catches :class:`InputError` and prints ``str(err)`` on stderr with exit
status 2, so every message must name where the value came from (file), what it
was (field) and the value itself.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Most characters of a value echoed in an error line (longer ones are cut, ending "..."):
#: a long file path is shown whole, a 1 GiB token is not.
MAX_SHOWN_CHARS = 200
#: Most characters of a reason (which may quote an input, such as a parser's message).
MAX_REASON_CHARS = 2000


def shorten(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    """``text`` cut to ``limit`` characters, the last three being ``...`` when cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass
class InputError(ValueError):
    """A bad input value: ``file: field = value: reason``."""

    reason: str
    field: str = ""
    value: object = None
    file: str = ""

    def __post_init__(self) -> None:
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """The one-line message shown to the user."""
        where = f"{self.file}: " if self.file else ""
        what = ""
        if self.field:
            what = shorten(f"{self.field}", 200)
            if self.value is not None:
                what += f" = {shorten(repr(self.value))}"
            what += ": "
        return f"{where}{what}{shorten(self.reason, MAX_REASON_CHARS)}".replace("\n", " ")

    def __str__(self) -> str:
        return self.message

    def in_file(self, file: str) -> InputError:
        """The same error, attributed to ``file`` unless it already names one."""
        if not self.file:
            self.file = file
            self.args = (self.message,)
        return self
