"""The README's Python example runs and prints what its comments say."""

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def python_example() -> str:
    readme = (REPO / "README.md").read_text()
    section = readme.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_example(tmp_path):
    code = python_example()
    assert len(code.strip().splitlines()) <= 11
    code = code.replace('"datasets/', f'"{REPO}/datasets/')
    # The example runs in another folder: a relative PYTHONPATH must still find the package.
    env = dict(os.environ)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve()) for p in paths)
    ran = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[0].startswith(
        "solved by search: peak 1048576 (LOAD 1048576, capacity 1048576) in "
    )
    assert lines[1].startswith("not solved: the heuristic needs 1391616 bytes")
    assert lines[2] == "[1024    0 1024]"
    assert (tmp_path / "solution.csv").read_text().startswith("id,lower,upper,size,offset\n")
