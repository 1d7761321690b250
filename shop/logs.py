"""Log lines that a request cannot forge: control characters are written escaped.

A path, header or field with CR, LF or NUL in it would otherwise start a line of its own in
the log. ``EscapingFormatter`` escapes them in the message (``\\x0d``) and in each line of a
traceback; gunicorn's access and error logs use it too (gunicorn.conf.py).
"""

import logging
import re
import traceback

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def escape(text: str) -> str:
    """``text`` with every control character written as ``\\xNN`` (or ``\\uNNNN``)."""
    return _CONTROL.sub(
        lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 256 else f"\\u{ord(m[0]):04x}", text
    )


# The chunks of a formatted traceback whose line breaks are its own: frames (indented), the
# header and the lines between chained exceptions. Anything else is an exception's message.
_STRUCTURE = ("  ", "Traceback (", "\nDuring handling", "\nThe above exception")


def _escape_lines(text: str) -> str:
    return "\n".join(escape(line) for line in text.split("\n"))


class EscapingFormatter(logging.Formatter):
    """A ``logging.Formatter`` whose every line is one line of the log."""

    def formatMessage(self, record):  # noqa: N802 - logging's name
        """The formatted line, control characters escaped."""
        return escape(super().formatMessage(record))

    def formatException(self, ei):  # noqa: N802 - logging's name
        """The traceback: its frames keep their lines; an exception's message (which may
        quote a request) is escaped onto one line."""
        parts = []
        for chunk in traceback.TracebackException(*ei).format():
            if chunk.startswith(_STRUCTURE):
                parts.append(_escape_lines(chunk))
            else:
                parts.append(escape(chunk.removesuffix("\n")) + "\n")
        return "".join(parts).removesuffix("\n")

    def formatStack(self, stack_info):  # noqa: N802 - logging's name
        """The stack, its lines kept and each one escaped."""
        return _escape_lines(super().formatStack(stack_info))
