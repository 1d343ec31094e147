"""Tests are specifications: every test function says in its docstring what it proves."""

import ast
from pathlib import Path

TESTS = Path(__file__).parent


def undocumented_tests(root: Path) -> list[str]:
    """`path:line name` of each test function under `root` without a docstring."""
    return [
        f"{path.relative_to(root)}:{node.lineno} {node.name}"
        for path in sorted(root.glob("**/test_*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test")
        and not ast.get_docstring(node)
    ]


def test_every_test_has_a_docstring():
    """Every test function in tests/ has a docstring; the failure names each one without."""
    assert undocumented_tests(TESTS) == []


def test_the_check_names_a_test_without_a_docstring(tmp_path: Path):
    """The check can fail: it names an undocumented test (sync or async) and passes a documented one."""
    (tmp_path / "test_sample.py").write_text(
        'def test_said():\n    """It says."""\n\n\n'
        "def test_silent():\n    pass\n\n\n"
        "async def test_quiet():\n    pass\n",
        encoding="utf-8",
    )
    assert undocumented_tests(tmp_path) == [
        "test_sample.py:5 test_silent",
        "test_sample.py:9 test_quiet",
    ]
