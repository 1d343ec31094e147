"""One idea per function: no function in src/ is longer than 60 lines (def to last line)."""

import ast
from pathlib import Path

SRC = Path(__file__).parent.parent / "src"
LIMIT = 60


def long_functions(root: Path, limit: int = LIMIT) -> list[str]:
    """`path:line name (N lines)` of each function or method under `root` longer than `limit`
    lines, counted from its `def` line to its last line (a nested function counts in its own
    right and in the function around it)."""
    return [
        f"{path.relative_to(root)}:{node.lineno} {node.name} ({length} lines)"
        for path in sorted(root.glob("**/*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (length := (node.end_lineno or node.lineno) - node.lineno + 1) > limit
    ]


def test_no_function_in_src_is_longer_than_60_lines():
    """Every function in src/ has at most 60 lines; the failure names each longer one."""
    assert long_functions(SRC) == []


def test_the_check_names_a_function_that_is_too_long(tmp_path: Path):
    """The check can fail: it names a long function (sync, async or a method) and passes a
    function of exactly the limit."""
    body = "    x = 1\n"
    (tmp_path / "sample.py").write_text(
        "def fits():\n" + body * 4 + "\n\n"
        "def too_long():\n" + body * 5 + "\n\n"
        "class Holder:\n    async def method(self):\n" + "        x = 1\n" * 5,
        encoding="utf-8",
    )
    assert long_functions(tmp_path, limit=5) == [
        "sample.py:8 too_long (6 lines)",
        "sample.py:17 method (6 lines)",
    ]
