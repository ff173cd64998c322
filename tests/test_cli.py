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


def test_bench_query_bad_input_is_one_error_line(tmp_path):
    """A missing or malformed questions file and an unknown --param: one ``error:`` line, exit 2."""
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "scripts" / "bench_query.py"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{bad\n")
    for extra in (["--questions", str(tmp_path / "missing.jsonl")], ["--questions", str(bad)],
                  ["--questions", str(bad), "--param", "bogus=1"]):
        done = subprocess.run([sys.executable, str(script), "--index", str(tmp_path), *extra], capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
