"""The slowest tests of a `make test` run, read from the JUnit XML files its phases wrote.

    python scripts/slowest.py build/junit-parallel.xml build/junit-serial.xml [--top 20]

Prints one line per test, slowest first: seconds, then the test's file and name. pytest's own
`--durations` lists each phase apart; this is the list over both.
"""

import argparse
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def slowest(reports: list[Path], top: int) -> list[tuple[float, str]]:
    """The `top` slowest test cases of `reports`, as (seconds, "file::name"), slowest first."""
    cases: list[tuple[float, str]] = []
    for report in reports:
        for case in ET.parse(report).iter("testcase"):  # noqa: S314
            where = case.get("classname", "").replace(".", "/")
            cases.append((float(case.get("time", "0")), f"{where}::{case.get('name', '')}"))
    return sorted(cases, reverse=True)[:top]


def main(argv: list[str] | None = None) -> int:
    """Prints the slowest tests of the reports named on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path)
    parser.add_argument("--top", type=int, default=20)
    options = parser.parse_args(argv)
    found = [report for report in options.reports if report.exists()]
    if not found:
        print("no JUnit report to read", file=sys.stderr)
        return 1
    print(f"The {options.top} slowest tests:")
    for seconds, test in slowest(found, options.top):
        print(f"{seconds:8.2f} s  {test}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
