"""The script driver (tests/helpers/scripts.py) ends each script as its own interpreter
would: negative controls for what sharing an interpreter could hide or change."""
from __future__ import annotations

import sys

import pytest
from helpers import scripts

CASES = {
    "clean.py": ("print('hello')\n", 0, "hello\n"),
    "exit3.py": ("import sys\nprint('x'); sys.exit(3)\n", 3, "x\n"),
    "message.py": ("import sys\nsys.exit('bad thing')\n", 1, ""),
    "raises.py": ("raise ValueError('boom')\n", 1, ""),
    # a name a previous script imported is not visible: globals are fresh
    "no_import.py": ("print(json.dumps(1))\n", 1, ""),
    "argv.py": ("import sys\nprint(sys.argv[1:])\n", 0, "['--device', 'cpu']\n"),
    # a child process writes to the script's own output
    "child.py": ("import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'print(7)'])\n", 0, "7\n"),
    # kills its interpreter: the driver dies, the script is run alone, the rest go on
    "killed.py": ("import os, signal\nos.kill(os.getpid(), signal.SIGFPE)\n", -8, ""),
    "after.py": ("import json\nprint(json.dumps([1]))\n", 0, "[1]\n"),
}


@pytest.fixture
def paths(tmp_path):
    out = []
    for name, (text, _, _) in CASES.items():
        (tmp_path / name).write_text(text)
        out.append(tmp_path / name)
    return out


def test_the_driver_ends_each_script_as_its_own_interpreter_does(paths, tmp_path):
    driven = scripts.run_many(paths, ["--device", "cpu"], cwd=tmp_path)
    alone = scripts.standalone(paths, ["--device", "cpu"], cwd=tmp_path)
    assert [(rc, out) for rc, out, _ in driven] == [(rc, out) for rc, out, _ in alone]
    assert [(rc, out) for rc, out, _ in driven] == [(rc, out) for _, rc, out in CASES.values()]
    assert "bad thing" in driven[2][2] and "ValueError: boom" in driven[3][2] and "NameError" in driven[4][2]


@pytest.mark.skipif(sys.platform == "win32", reason="signals")
def test_one_driver_takes_every_script_after_a_killed_one(paths, tmp_path):
    driven = scripts.run_many(paths, ["--device", "cpu"], cwd=tmp_path, drivers=1)
    assert [rc for rc, _, _ in driven] == [rc for _, rc, _ in CASES.values()]
