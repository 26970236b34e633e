"""Get the text out of a JSON record: named fields, dotted paths, chat messages."""

from __future__ import annotations

_MISSING = object()
_MAX_LISTED = 20


class FieldError(Exception):
    """A record holds no usable text; the message says why and what to do."""


def record_text(record: object, fields: tuple[str, ...]) -> str:
    """The text of `record`: the `fields` values joined with "\\n".

    A dotted field ("meta.body") walks nested objects; a key that itself contains the
    dot wins. When none of the fields is present but a chat-style "messages" list of
    {"role": ..., "content": str} is, the text is the contents joined with "\\n"
    (messages without content, such as tool calls, are left out).
    """
    if not isinstance(record, dict):
        raise FieldError(
            f"record is {json_type(record)}, not an object; each record must be an"
            f' object such as {{"{fields[0]}": "..."}}'
        )
    values = [_lookup(record, field) for field in fields]
    if all(value is _MISSING for value in values) and "messages" in record:
        return _chat_text(record["messages"])
    for field, value in zip(fields, values, strict=True):
        if value is _MISSING:
            raise FieldError(f"no field '{field}' ({_listing(record, field)}); choose one with --text-field")
        if not isinstance(value, str):
            raise FieldError(
                f"field '{field}' is {json_type(value)}, not a string"
                f" ({_listing(record, field)}); choose a text field with --text-field"
            )
    return "\n".join(values)


def missing_column(columns: list[str] | None, fields: tuple[str, ...], option: str = "--text-field") -> str | None:
    """Why no record of a table can have text (a field names no column, `option` chooses one),
    or None; None also when the columns are not known before reading, or chat "messages" may hold it."""
    if columns is None or "messages" in columns:
        return None
    for field in fields:
        if field not in columns and field.split(".")[0] not in columns:
            return f"no column '{field}' (columns: {', '.join(columns)}); choose one with {option}"
    return None


def json_type(value: object) -> str:
    """A JSON name for the type of a decoded value, with its article."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _lookup(record: dict, field: str) -> object:
    if field in record:
        return record[field]
    node: object = record
    for part in field.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _listing(record: dict, field: str) -> str:
    """The fields next to where `field` was looked for, e.g. "fields of 'meta': a, b"."""
    node, walked = record, []
    for part in field.split(".")[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            break
        node = child
        walked.append(part)
    names = list(node)
    shown = ", ".join(names[:_MAX_LISTED]) or "none"
    if len(names) > _MAX_LISTED:
        shown += f", ... ({len(names) - _MAX_LISTED} more)"
    where = f" of '{'.'.join(walked)}'" if walked else ""
    return f"fields{where}: {shown}"


def _chat_text(messages: object) -> str:
    if not isinstance(messages, list):
        raise FieldError(
            f"field 'messages' is {json_type(messages)}, not a list of"
            " {role, content} objects; choose a text field with --text-field"
        )
    contents = []
    for number, message in enumerate(messages, 1):
        content = message.get("content") if isinstance(message, dict) else _MISSING
        if content is None:
            continue
        if not isinstance(content, str):
            raise FieldError(
                f"message {number} has no string 'content'; chat records need"
                ' messages like {"role": "user", "content": "..."}'
            )
        contents.append(content)
    return "\n".join(contents)
