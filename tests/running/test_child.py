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


# --- the supervisor's other parts: the watchdog, interrupts, parallel commands, exit texts -----

def test_a_watchdog_armed_by_progress_does_not_fire_and_one_left_silent_does():
    import subprocess
    import time
    from mlx_vjpcheck.running.child import Watchdog
    talk = "import time\nfor _ in range(8):\n    print('x', flush=True); time.sleep(0.1)\n"
    proc = subprocess.Popen([sys.executable, "-c", talk], stdout=subprocess.PIPE, text=True)
    dog = Watchdog(proc, 0.6)
    dog.arm()
    for _ in proc.stdout:   # each line is progress: the limit starts again
        dog.arm()
    assert proc.wait() == 0 and not dog.fired
    dog.stop()
    silent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    dog, t0 = Watchdog(silent, 0.3), time.monotonic()
    dog.arm()
    assert silent.wait(timeout=20) == -9 and dog.fired and time.monotonic() - t0 < 20


def test_an_interrupted_parent_leaves_no_child_running():
    import subprocess
    from mlx_vjpcheck.running.child import ended_on_interrupt
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    with pytest.raises(KeyboardInterrupt):
        with ended_on_interrupt(proc):
            raise KeyboardInterrupt
    assert proc.poll() is not None
    calm = subprocess.Popen([sys.executable, "-c", "pass"])
    with ended_on_interrupt(calm):   # left normally: nothing is ended
        pass
    assert calm.wait(timeout=20) == 0


def test_commands_side_by_side_each_give_exit_code_and_output():
    from mlx_vjpcheck.running.child import run_side_by_side
    got = run_side_by_side({"a": ([sys.executable, "-c", "print('a')"], None),
                            "b": ([sys.executable, "-c", "import sys; sys.stderr.write('b'); sys.exit(3)"], None)})
    assert got["a"][:3] == (0, "a\n", "") and got["b"][:3] == (3, "", "b")


def test_one_place_words_an_exit_status_in_each_caller_s_words():
    from mlx_vjpcheck.core.exits import died, exit_text
    assert exit_text(-11) == "signal SIGSEGV" and exit_text(3) == "exit code 3" and exit_text(-99) == "signal 99"
    assert describe_exit(3) == "exit 3" and describe_exit(-8) == "signal SIGFPE"   # fuzz signatures
    assert exit_text(-6, "exit", "killed by") == "killed by SIGABRT"                   # version probes
    assert exit_text(-99, "exit", "killed by") == "killed by signal 99"
    assert died(-8, "first\nlast line\n") == "process died (signal SIGFPE): last line"
    assert died(1, "", "native process") == "native process died (exit code 1)"
    assert died(-9, "x", how="timed out after 2 s") == "process died (timed out after 2 s): x"
