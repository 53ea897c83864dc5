"""running/child.py: the parent side shared by the fuzz worker and the native
server. Small Python children play the protocol (and break it)."""
from __future__ import annotations

import sys

import pytest

from mlx_vjpcheck.running.child import Child, ChildError, describe_exit

ECHO = r"""
import json, sys
print(json.dumps({"ready": True, "ops": ["x"]}), flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("die"):
        print(json.dumps({"stage": "vjp", "checks": ["forward"]}), flush=True)
        sys.stderr.write("about to abort\n"); sys.stderr.flush()
        import os; os.abort()
    if msg.get("quit"):
        print(json.dumps({"answer": 0}), flush=True)
        sys.exit(0)
    print(json.dumps({"stage": "forward", "checks": []}), flush=True)
    print(json.dumps({"answer": msg["n"] * 2}), flush=True)
"""


def _child(source, **kw) -> Child:
    return Child([sys.executable, "-c", source], name="test child", **kw)


def test_answers_and_hello():
    with _child(ECHO) as c:
        assert c.request('{"n": 21}\n') == ({"answer": 42}, None)
        assert c.hello["ops"] == ["x"] and c.starts == 1


def test_a_death_names_the_stage_and_the_next_request_restarts():
    with _child(ECHO) as c:
        answer, death = c.request('{"die": true}\n')
        assert answer is None
        assert death["stage"] == "vjp" and death["checks"] == ["forward"]
        assert death["how"] == "signal SIGABRT" and death["detail"] == "about to abort"
        assert c.request('{"n": 1}\n') == ({"answer": 2}, None) and c.starts == 2


def test_a_child_dead_between_requests_is_replaced_and_counted():
    with _child(ECHO) as c:
        c.request('{"quit": true}\n')
        c.proc.wait()
        assert c.request('{"n": 2}\n') == ({"answer": 4}, None)
        assert c.dead_between_cases == 1 and c.starts == 2


def test_a_child_that_never_says_ready_is_one_error_line():
    with pytest.raises(ChildError) as e:
        _child("import sys; sys.stderr.write('no module named mlx\\n'); sys.exit(3)").start()
    assert str(e.value) == "test child did not start (exit 3): no module named mlx"


def test_a_missing_program_is_one_error_line():
    c = Child(["/nonexistent/vjpcheck-native"], name="server")
    with pytest.raises(ChildError, match="^cannot start server: No such file or directory$"):
        c.start()


def test_the_watchdog_kills_a_hung_request():
    hang = 'import json, time; print(json.dumps({"ready": True}), flush=True); input(); time.sleep(60)'
    with _child(hang, timeout_s=0.5) as c:
        answer, death = c.request("{}\n")
    assert answer is None and death["how"] == "signal SIGKILL"


def test_describe_exit():
    assert describe_exit(0) == "exit 0" and describe_exit(-6) == "signal SIGABRT"
    assert describe_exit(-200) == "signal 200"
