"""Plain-text helpers shared by the tool results and the CLI."""


def one_line(text: str | None) -> str:
    """`text` with its line breaks and runs of spaces folded into single spaces, for lists."""
    return " ".join((text or "").split())


def indented(key: str, value: object) -> str:
    """`key: value`, the lines after the first indented under the key."""
    first, *rest = str(value).split("\n")
    return "\n".join([f"{key}: {first}", *(f"  {line}" for line in rest)])
