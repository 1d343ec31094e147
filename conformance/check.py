"""Run the official MCP conformance suite against `nineplan serve --transport http` and compare
each server scenario's result with conformance/expected.txt.

    python conformance/check.py --node NODE --suite SUITE_JS [--expected FILE]

`make conformance` installs the suite and a Node it runs on, then calls this. The server runs on
a free loopback port, without a token (the suite cannot send one), on a temporary sessions
folder. Exit 0 when every scenario expected to `pass` passes and the suite has no scenario the
file does not list; 1 otherwise, with one line per problem.
"""

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

import anyio
import attrs

from nineplan_adapters.entrypoints.cli.demo import spawned_http_server

HERE = Path(__file__).resolve().parent
SHOULD_SUCCEED = "pass"  # the word the expected file uses
#: A result folder's name: `server-`, the scenario, and the time it ran.
RESULT_FOLDER = re.compile(r"server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z")
NOT_APPLICABLE = "not applicable"


@attrs.frozen
class Expected:
    """What conformance/expected.txt says of one scenario."""

    outcome: str  # SHOULD_SUCCEED or NOT_APPLICABLE
    reason: str


@attrs.frozen
class Result:
    """One scenario's outcome: passed when it has a successful check and no failed one."""

    passed: bool
    failures: list[str]


def read_expected(path: Path) -> dict[str, Expected]:
    """`scenario | pass` and `scenario | not applicable | reason` lines; `#` starts a comment.

    Raises:
        SystemExit: a line in another form, naming the file and line.
    """
    expected: dict[str, Expected] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [field.strip() for field in line.split("|")]
        if fields[1:2] == [SHOULD_SUCCEED] and len(fields) == 2:  # noqa: PLR2004 - name and outcome
            expected[fields[0]] = Expected(SHOULD_SUCCEED, "")
        elif fields[1:2] == [NOT_APPLICABLE] and len(fields) == 3 and fields[2]:  # noqa: PLR2004
            expected[fields[0]] = Expected(NOT_APPLICABLE, fields[2])
        else:
            sys.exit(
                f"{path}:{number}: expected 'SCENARIO | pass' or "
                f"'SCENARIO | not applicable | REASON', got {line!r}"
            )
    return expected


async def suite_scenarios(node: Path, suite: Path) -> list[str]:
    """The server scenarios the suite has (`conformance list --server`)."""
    listed = await anyio.run_process([str(node), str(suite), "list", "--server"])
    return [
        line.strip().removeprefix("- ").split(" [")[0]
        for line in listed.stdout.decode().splitlines()
        if line.strip().startswith("- ")
    ]


def read_results(folder: Path) -> dict[str, Result]:
    """Each scenario's result from the suite's `-o` folder (`server-NAME-TIMESTAMP/checks.json`)."""
    results: dict[str, Result] = {}
    for checks_file in sorted(folder.glob("server-*/checks.json")):
        named = RESULT_FOLDER.fullmatch(checks_file.parent.name)
        if named is None:
            continue
        name = named.group(1)
        checks = json.loads(checks_file.read_text(encoding="utf-8"))
        failures = [
            f"{check.get('id')}: {check.get('errorMessage') or check.get('description')}"
            for check in checks
            if check.get("status") == "FAILURE"
        ]
        passed = not failures and any(check.get("status") == "SUCCESS" for check in checks)
        results[name] = Result(passed, failures)
    return results


def compare(
    scenarios: list[str], expected: dict[str, Expected], results: dict[str, Result]
) -> list[str]:
    """Print one line per scenario; return the problems (empty when all is as expected)."""
    problems = [
        f"{name}: listed in the expected file but not a scenario of the suite"
        for name in sorted(set(expected) - set(scenarios))
    ]
    for name in scenarios:
        wanted, result = expected.get(name), results.get(name)
        got = "no result" if result is None else ("pass" if result.passed else "fail")
        if wanted is None:
            problems.append(f"{name}: a scenario the expected file does not list (it gave {got})")
            print(f"NEW   {name}: {got}")
        elif wanted.outcome == NOT_APPLICABLE:
            print(f"n/a   {name} ({got}): {wanted.reason}")
        elif result is not None and result.passed:
            print(f"PASS  {name}")
        else:
            why = "; ".join(result.failures) if result is not None else "the suite wrote no result"
            problems.append(f"{name}: expected to pass, got {got}: {why}")
            print(f"FAIL  {name}: {why}")
    return problems


async def run(node: Path, suite: Path, expected_file: Path) -> int:
    """Serve, run every server scenario, compare; the exit code."""
    expected = read_expected(expected_file)
    started = time.monotonic()
    scenarios = await suite_scenarios(node, suite)
    with tempfile.TemporaryDirectory(prefix="nineplan-conformance-") as scratch:
        folder = Path(scratch)
        with (folder / "server.log").open("w", encoding="utf-8") as log:
            async with spawned_http_server(folder / "sessions", stderr=log) as url:
                command = [str(node), str(suite), "server", "--url", url, "--suite", "all"]
                ran = await anyio.run_process(
                    [*command, "-o", str(folder / "results")], check=False
                )
        results = read_results(folder / "results")
        if not results:
            print(ran.stdout.decode(), ran.stderr.decode(), sep="\n", file=sys.stderr)
            print((folder / "server.log").read_text(encoding="utf-8"), file=sys.stderr)
    problems = compare(scenarios, expected, results)
    passed = sum(1 for name in scenarios if (r := results.get(name)) is not None and r.passed)
    applicable = sum(1 for e in expected.values() if e.outcome == SHOULD_SUCCEED)
    print(
        f"conformance: {len(scenarios)} scenarios, {passed} passed, {applicable} expected to "
        f"pass, {len(problems)} problems, {time.monotonic() - started:.1f} s"
    )
    for problem in problems:
        print(f"conformance: {problem}", file=sys.stderr)
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--node", type=Path, required=True, help="the Node 22 executable")
    parser.add_argument("--suite", type=Path, required=True, help="the suite's dist/index.js")
    parser.add_argument("--expected", type=Path, default=HERE / "expected.txt")
    arguments = parser.parse_args()
    return anyio.run(run, arguments.node, arguments.suite, arguments.expected)


if __name__ == "__main__":
    sys.exit(main())
