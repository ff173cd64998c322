"""The command-line plumbing: error lines and exit codes, and the exit that skips the
interpreter's teardown but keeps exit handlers, complete output and running threads' work."""

import subprocess
import sys
import textwrap


def _run(body: str, tmp_path) -> subprocess.CompletedProcess:
    script = tmp_path / "cmd.py"
    script.write_text(textwrap.dedent(body))
    return subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True,
                          timeout=120)


def test_exit_keeps_output_handlers_and_code(tmp_path):
    done = _run("""
        import atexit, pathlib, sys
        from linearrag.cli import run_cli

        def main():
            atexit.register(lambda: pathlib.Path(sys.argv[1], "handler-ran").write_text("yes"))
            sys.stdout.write("x" * 200_000)   # buffered: must be flushed before the process ends
            print("to stderr", file=sys.stderr)
            return 3

        run_cli(main)
        raise SystemExit("not reached")
    """, tmp_path)
    assert done.returncode == 3
    assert done.stdout == "x" * 200_000 and done.stderr == "to stderr\n"
    assert (tmp_path / "handler-ran").read_text() == "yes"


def test_errors_are_one_line_and_exit_2(tmp_path):
    done = _run("""
        from linearrag.cli import run_cli
        from linearrag.errors import ParameterError

        def main():
            raise ParameterError("bad --top-k; pass a positive number")

        run_cli(main)
    """, tmp_path)
    assert done.returncode == 2
    assert done.stderr == "error: bad --top-k; pass a positive number\n" and done.stdout == ""


def test_a_running_thread_finishes_first(tmp_path):
    done = _run("""
        import pathlib, sys, threading, time
        from linearrag.cli import run_cli

        def work():
            time.sleep(0.5)
            pathlib.Path(sys.argv[1], "thread-done").write_text("yes")

        def main():
            threading.Thread(target=work).start()   # not a daemon: the process waits for it
            return 0

        run_cli(main)
    """, tmp_path)
    assert done.returncode == 0
    assert (tmp_path / "thread-done").read_text() == "yes"
