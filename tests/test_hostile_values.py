"""Hostile files and values: refused in one line, never a hang, a traceback or a runaway (23.4).

Input images that are FIFOs, links to devices or sockets; file names that are numbers only to
Unicode; a prices file that is an alias bomb or holds numbers no price is; float options given
NaN or infinity; seeds out of range; empty lists and model names; and ``-q``/``-v`` on every
verb and sub-verb.
"""

from __future__ import annotations

import argparse
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from amvicc.cli import main
from amvicc.cli.main import build_parser
from amvicc.resources import resource_dir
from amvicc.store import Store
from amvicc.testing.fake_openai import FakeOpenAIServer
from amvicc.testing.mmvp_images import write_mmvp_images
from tests.test_hostile_input import GIB, amvicc, one_line

# --- input images that are not regular files ----------------------------------------------------


@pytest.fixture
def hostile_images(tmp_path: Path) -> Iterator[Path]:
    """MMVP images 1-6, where 1 links to /dev/zero, 2 is a FIFO, 3 a socket; and a '².png'."""
    folder = write_mmvp_images(tmp_path / "mmvp", range(1, 7))
    (folder / "1.png").unlink()
    (folder / "1.png").symlink_to("/dev/zero")
    (folder / "2.png").unlink()
    os.mkfifo(folder / "2.png")
    (folder / "3.png").unlink()
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(folder / "3.png"))
    (folder / "².png").write_bytes((folder / "4.png").read_bytes())
    (folder / "٥.jpg").write_bytes((folder / "5.png").read_bytes())  # Arabic-Indic five
    try:
        yield folder
    finally:
        listening.close()


def test_devices_fifos_and_sockets_are_listed_as_unreadable(
    hostile_images: Path, tmp_path: Path
) -> None:
    with FakeOpenAIServer() as server:
        args = ["answer", "--model", "m", "--base-url", server.url, "--images", str(hostile_images)]
        proc = amvicc(*args, "--index", "1-6", "--store", str(tmp_path / "ws"), timeout=60)
        line = one_line(proc, "3 of 6 images", "unreadable: 1-3", "--skip-missing")
        assert "not a regular file" in line
        assert server.requests == []


def test_skip_missing_answers_the_regular_files_and_names_the_strays(
    hostile_images: Path, tmp_path: Path
) -> None:
    with FakeOpenAIServer() as server:
        args = ["answer", "--model", "m", "--base-url", server.url, "--images", str(hostile_images)]
        proc = amvicc(
            *args, "--index", "1-6", "--skip-missing", "--store", str(tmp_path / "ws"), timeout=60
        )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert "not images of the catalogue" in proc.stderr and "².png" in proc.stderr
    assert "٥.jpg" in proc.stderr
    with Store(tmp_path / "ws") as store:
        assert sorted(r.question_index for r in store.responses()) == [4, 5, 6]


# --- --prices ------------------------------------------------------------------------------------

ALIAS_BOMB = "\n".join(
    [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        *(f"{chr(98 + n)}: &{chr(98 + n)} [{','.join([f'*{chr(97 + n)}'] * 9)}]" for n in range(9)),
        "models: {m: {per_request: 1}}",
        "currency: *j",
    ]
)


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("prices") / "ws"
    sheet = resource_dir("grades") / "dalle3_grades.csv"
    assert main(["import-grades", str(sheet), "--model", "dalle3", "--store", str(root), "-q"]) == 0
    return root


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (ALIAS_BOMB, "alias"),
        ("models:\n  m:\n    per_image: 1" + "0" * 400 + "\n", "per_image"),
        ("models:\n  m:\n    per_image: .nan\n", "'.nan' is not a finite number (line 3)"),
        ("models:\n  m:\n    input_per_million: .inf\n", "'.inf' is not a finite number"),
        ("models:\n  m:\n    output_per_million: -.inf\n", "'-.inf' is not a finite"),
        ("models:\n  m:\n    per_request: 1.0e+300\n", "per_request"),
    ],
    ids=["alias-bomb", "400-digits", "nan", "inf", "minus-inf", "absurd"],
)
def test_a_prices_file_is_read_safely(
    graded: Path, tmp_path: Path, text: str, fragment: str
) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(text, encoding="utf-8")
    args = ["report", "--store", str(graded), "--format", "csv", "--bootstrap", "0"]
    proc = amvicc(*args, "--prices", str(prices), "-q", memory=2 * GIB, timeout=90)
    one_line(proc, "--prices", fragment)


# --- option values -------------------------------------------------------------------------------


def _parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser under ``parser`` with the words that reach it (``scenes build``)."""
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subparsers:
        yield path, parser
    for action in subparsers:
        for name, child in action.choices.items():
            yield from _parsers(child, (*path, name))


def _options(kind: type) -> Iterator[tuple[tuple[str, ...], argparse.Action]]:
    """Every option of every verb whose type turns ``1`` into ``kind``."""
    for path, parser in _parsers(build_parser()):
        for action in parser._actions:
            convert = action.type
            if not action.option_strings or not callable(convert):
                continue
            try:
                value = convert("1")
            except (argparse.ArgumentTypeError, ValueError, TypeError):
                continue
            if type(value) is kind:
                yield path, action


FLOAT_OPTIONS = sorted({(" ".join(p), a.option_strings[-1]) for p, a in _options(float)})


def test_every_float_option_is_found() -> None:
    names = {name for _, name in FLOAT_OPTIONS}
    assert {"--temperature", "--judge-temperature", "--guidance", "--timeout"} <= names
    assert "--audit-fraction" in names and "--threshold-pair" in names


@pytest.mark.parametrize("where", FLOAT_OPTIONS, ids=[f"{p}-{o}" for p, o in FLOAT_OPTIONS])
def test_every_float_option_refuses_nan_and_infinity(where: tuple[str, str]) -> None:
    path, option = where
    action = next(
        a for p, a in _options(float) if " ".join(p) == path and option in a.option_strings
    )
    assert action.type is not None
    for value in ("nan", "NaN", "inf", "-inf", "Infinity", "1e999"):
        with pytest.raises(argparse.ArgumentTypeError, match="finite"):
            action.type(value)


SEED_OPTIONS = sorted(
    {(" ".join(p), a.option_strings[-1]) for p, a in _options(int) if "seed" in a.dest}
)


def test_every_seed_option_is_found() -> None:
    assert len(SEED_OPTIONS) >= 9, SEED_OPTIONS


@pytest.mark.parametrize("where", SEED_OPTIONS, ids=[f"{p}-{o}" for p, o in SEED_OPTIONS])
def test_every_seed_option_says_its_range(where: tuple[str, str]) -> None:
    path, option = where
    action = next(a for p, a in _options(int) if " ".join(p) == path and option in a.option_strings)
    assert action.type is not None
    assert action.type("0") == 0 and action.type(str(2**63 - 1)) == 2**63 - 1
    for bad in ("-1", str(2**63), "1.5"):
        with pytest.raises(argparse.ArgumentTypeError, match="0 to 9223372036854775807"):
            action.type(bad)


def test_report_seed_minus_one_is_one_line(graded: Path) -> None:
    proc = amvicc("report", "--store", str(graded), "--format", "csv", "--seed", "-1")
    one_line(proc, "--seed", "0 to")


# Without a key, a command that got past its arguments stops at once (on the old code too).
NO_KEY = ["--api-key-env", "AMVICC_UNSET_KEY", "--index", "1"]


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "--categories", ","],
        ["report", "--models", ","],
        ["answer", "--model", "", "--images", "."],
        ["answer", "--model", "  ", "--images", "."],
        ["generate", "--model", "", *NO_KEY],
        ["grade", "--judge", ""],
        ["judge", "--run", "r", "--method", "question", "--judge", ""],
        ["challenge", "--run", "r", "--arm", "peers", "--peer-run", ""],
        ["import-answers", "x.jsonl", "--model", ""],
        ["runs", "--models", ", ,"],
        ["generate", "--model", "openai:m", "--option", "quality=.nan", *NO_KEY],
        ["generate", "--model", "openai:m", "--option", "quality=-.inf", *NO_KEY],
        ["score", "--port", "70000"],
    ],
    ids=lambda argv: "-".join(a or "EMPTY" for a in argv).replace(" ", "_"),
)
def test_empty_lists_names_and_bad_values_are_refused(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:  # argparse refuses it, before anything runs
        main([*argv, "--store", str(tmp_path / "ws")])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert not (tmp_path / "ws").exists()


PARSERS = [" ".join(path) for path, _ in _parsers(build_parser())]


@pytest.mark.parametrize("path", PARSERS)
def test_quiet_and_verbose_on_every_verb_and_sub_verb(path: str) -> None:
    parser = dict((" ".join(p), q) for p, q in _parsers(build_parser()))[path]
    flags = {flag for action in parser._actions for flag in action.option_strings}
    assert {"-q", "--quiet", "-v", "--verbose"} <= flags, path


def test_scenes_build_quiet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "scenes"
    argv = ["scenes", "build", "--out", str(out), "--per-category", "1", "--categories", "tx"]
    assert main([*argv, "-q"]) == 0
    assert main(["scenes", "-v", "build", "--out", str(out), "--per-category", "1", "-q"]) == 0
    assert (out / "catalogue.csv").is_file()
