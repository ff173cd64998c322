"""The code's shape rules hold (docs/architecture.md): module and function sizes, no import
cycle, every import inside a function says why, no dead code."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_shape_rules_hold():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_shape.py")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


def test_the_checker_finds_a_cycle_and_a_long_function(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import check_shape
    finally:
        sys.path.pop(0)
    assert check_shape.cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert check_shape.cycles({"a": {"b"}, "b": set()}) == []
    body = "\n".join(f"    x = {i}" for i in range(81))
    (tmp_path / "long.py").write_text(f"def f():\n{body}\n")
    monkeypatch.setattr(check_shape, "ROOT", tmp_path)
    assert check_shape.long_functions([tmp_path / "long.py"]) == [("long.py:1 f", 82)]
