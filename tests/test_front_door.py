"""One front door: every subcommand of `linearrag` answers --help, a command's flags are the
same under both spellings (script and subcommand), and the retrieval parameters' choices,
validation and help come from their typed fields."""

import argparse
import subprocess
import sys
import typing
from dataclasses import fields
from pathlib import Path

import pytest

from linearrag import api
from linearrag.commands import build, evaluate, main, mcp, query
from linearrag.errors import ParameterError
from linearrag.retrieval import RetrievalParams
from linearrag.retrieval.params import MODES, STAGES, choices_of, param_help

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("sub", list(main.COMMANDS))
def test_every_subcommand_answers_help(sub):
    proc = subprocess.run([sys.executable, "-m", "linearrag.commands.main", sub, "--help"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.startswith(f"usage: linearrag {sub}"), proc.stderr
    assert "--" in proc.stdout   # its options are listed


def _options(parser: argparse.ArgumentParser) -> dict[str, tuple]:
    return {opt: (a.choices and tuple(a.choices), a.default, a.nargs) for a in parser._actions
            for opt in a.option_strings if opt != "-h" and opt != "--help"}


@pytest.mark.parametrize("name,module", [("build", build), ("query", query), ("evaluate", evaluate), ("mcp", mcp)])
def test_a_flag_reaches_both_spellings(name, module):
    script = argparse.ArgumentParser()
    module.add_arguments(script)
    top = argparse.ArgumentParser()
    subs = top.add_subparsers()
    module.add_arguments(subs.add_parser(name))
    assert _options(script) == _options(subs.choices[name])
    # and the dispatcher builds the subcommand from the same definition
    args, chosen = main.parse_args([name, *_required(name)])
    assert chosen is module and args.command == name


def _required(name: str) -> list[str]:
    return {"build": ["--output", "x"], "query": [], "evaluate": ["--index", "i", "--questions", "q"],
            "mcp": []}[name]


def test_choices_and_validation_come_from_the_fields():
    hints = typing.get_type_hints(RetrievalParams)
    literal = [f.name for f in fields(RetrievalParams) if typing.get_origin(hints[f.name]) is typing.Literal]
    assert "mode" in literal and "fusion" in literal and len(literal) >= 12
    assert choices_of("mode") == MODES == ("linearrag", "dense", "bm25", "rrf")
    for name in literal:
        with pytest.raises(ParameterError, match=f"^{name} must be "):
            RetrievalParams().with_overrides({name: "no-such-choice"})
        for value in choices_of(name):
            assert getattr(RetrievalParams().with_overrides({name: value}), name) == value
    with pytest.raises(ParameterError, match="damping must be in"):
        RetrievalParams(damping=1.5)
    help_ = param_help()
    assert list(help_) == list(STAGES)
    listed = [name for items in help_.values() for name, _ in items]
    assert sorted(listed) == sorted(f.name for f in fields(RetrievalParams))
    assert all(text for items in help_.values() for _, text in items)
    query_mode = next(a for a in _parser(query)._actions if "--mode" in a.option_strings)
    assert tuple(query_mode.choices) == MODES


def _parser(module) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser()
    module.add_arguments(ap)
    return ap


def test_list_params_prints_every_parameter_by_stage():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "query_graph.py"), "--list-params"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0
    for f in fields(RetrievalParams):
        assert f"  {f.name} " in proc.stdout
    assert proc.stdout.startswith("output:") and "\nwalk:" in proc.stdout


def test_query_params_merges_a_preset_overrides_top_k_and_mode():
    p = api.query_params("paper-2wiki", ["delta=0.2"], top_k=7, mode="dense")
    assert (p.delta, p.top_k, p.mode, p.reset) == (0.2, 7, "dense", "paper")
    assert api.query_params(RetrievalParams(top_k=3), {"lam": 2}).top_k == 3
    with pytest.raises(ParameterError, match="no index given"):
        api.require_index(None)
    assert api.require_index(None, "idx") == "idx"
