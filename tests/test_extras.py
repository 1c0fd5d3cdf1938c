"""The lean install: the core's dependencies, the extras, and one line naming a missing extra."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from amvicc import extras
from amvicc.cli import main
from amvicc.cli.main import broken_install
from amvicc.extras import EXTRAS, MissingExtra, missing_modules, require_extra
from amvicc.store import Store

REPO = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
OPTIONAL: dict[str, list[str]] = PROJECT["optional-dependencies"]


def names(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(r).name) for r in requirements}


def self_extras(requirements: list[str]) -> set[str]:
    """The extras of amvicc itself a group pulls in (``amvicc[all]``)."""
    return {
        extra
        for r in map(Requirement, requirements)
        if canonicalize_name(r.name) == "amvicc"
        for extra in r.extras
    }


def floor(requirement: Requirement) -> Version:
    (lowest,) = [Version(s.version) for s in requirement.specifier if s.operator == ">="]
    return lowest


def test_no_library_of_an_extra_is_a_core_dependency() -> None:
    """An extra names a core library only to raise its floor ([inspect]: openai >= 3.4)."""
    core = {canonicalize_name(r.name): r for r in map(Requirement, PROJECT["dependencies"])}
    optional = {name for extra in EXTRAS for name in names(OPTIONAL[extra])}
    assert {"torch", "diffusers", "transformers", "gradio", "onnxruntime"} <= optional
    for extra in EXTRAS:
        for requirement in map(Requirement, OPTIONAL[extra]):
            name = canonicalize_name(requirement.name)
            if name in core:
                assert floor(requirement) > floor(core[name]), (extra, str(requirement))


def test_every_extra_installs_the_modules_amvicc_probes() -> None:
    for extra, modules in EXTRAS.items():
        assert extra in OPTIONAL, extra
        installed = names(OPTIONAL[extra])
        for module in modules:
            assert canonicalize_name(module) in installed, (extra, module)


def test_all_is_every_extra_but_qwen_and_the_tests_install_all() -> None:
    assert self_extras(OPTIONAL["all"]) == set(EXTRAS) - {"qwen"}
    assert self_extras(OPTIONAL["test"]) == {"all"}
    local = {Requirement(r).name: Requirement(r).specifier for r in OPTIONAL["local"]}
    assert "2.13.0" in local["torch"]  # the CPU build dev.py installs first


def test_a_missing_extra_is_one_line_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(extras.EXTRAS, "local", ("json", "amvicc_no_such_module"))
    assert missing_modules("local") == ["amvicc_no_such_module"]
    with pytest.raises(MissingExtra) as raised:
        require_extra("local", "tiny-sd3 runs a local diffusers pipeline")
    assert str(raised.value) == (
        "tiny-sd3 runs a local diffusers pipeline: pip install 'amvicc[local]' "
        "(not installed: amvicc_no_such_module)"
    )
    assert raised.value.exit_code == 2


def test_several_extras_are_named_together_and_installed_ones_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(extras.EXTRAS, "local", ("amvicc_no_torch",))
    monkeypatch.setitem(extras.EXTRAS, "score", ("json",))
    monkeypatch.setitem(extras.EXTRAS, "ocr", ("amvicc_no_ocr", "amvicc_no_onnx"))
    with pytest.raises(MissingExtra, match=r"^the demo: pip install 'amvicc\[local,ocr\]' "):
        require_extra(("local", "score", "ocr"), "the demo")
    require_extra("score", "amvicc score")  # installed: nothing to say


def test_installed_extras_pass() -> None:
    for extra in ("local", "score", "ocr"):  # what the test environment installs
        assert missing_modules(extra) == [], extra
        require_extra(extra, "a test")


def test_generate_names_the_extra_before_touching_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(extras.EXTRAS, "local", ("amvicc_no_torch",))
    workspace = tmp_path / "ws"
    assert main(["generate", "--model", "tiny-sd3", "--store", str(workspace)]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "amvicc generate: error: tiny-sd3 runs a local diffusers pipeline: pip install "
        "'amvicc[local]' (not installed: amvicc_no_torch)"
    ]
    if workspace.exists():
        with Store(workspace) as store:
            assert store.runs() == []


@pytest.mark.slow
def test_the_core_runs_with_the_extras_hidden() -> None:
    """The bare-core check (``dev.py core``), here with the heavy libraries hidden."""
    done = subprocess.run(
        [sys.executable, str(REPO / "tests" / "core_install.py"), "--hide-extras"],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "the core install holds" in done.stdout


# --- an installed package that cannot be imported ---------------------------------------------


def test_an_installed_package_that_fails_to_import_is_one_line(tmp_path: Path) -> None:
    """``datasets`` installed beside a pyarrow built for NumPy 2, under NumPy 1 (as uv's
    lowest resolution once left it): exit 2, one line naming both packages and the fix."""
    site = tmp_path / "site-packages"
    (site / "datasets").mkdir(parents=True)
    (site / "datasets" / "__init__.py").write_text("from .arrow_dataset import Dataset\n")
    (site / "datasets" / "arrow_dataset.py").write_text("import pyarrow\n")
    (site / "pyarrow").mkdir()
    (site / "pyarrow" / "__init__.py").write_text(
        "raise ImportError('pyarrow requires NumPy 2.0 or newer, found 1.26.4')\n"
    )
    with Store(tmp_path / "ws"):
        pass
    export = ["export", "--store", str(tmp_path / "ws"), "--out", str(tmp_path / "out")]
    done = subprocess.run(
        [sys.executable, "-m", "amvicc", *export],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])},
    )
    assert done.returncode == 2, done.stderr
    # (an empty workspace's warning about its results table may come first)
    assert done.stderr.splitlines()[-1:] == [
        "amvicc export: error: cannot import datasets → pyarrow: pyarrow requires NumPy 2.0 or "
        "newer, found 1.26.4 (an installed package is broken or does not match the others: "
        "`pip check` names it; reinstalling or upgrading it fixes it)"
    ]
    assert not (tmp_path / "out").exists()


def test_a_missing_module_amvicc_imports_itself_is_named() -> None:
    with pytest.raises(ImportError) as raised:
        import amvicc_test_absent_library  # type: ignore[import-not-found]  # noqa: F401
    assert (broken_install(raised.value) or "").startswith(
        "cannot import amvicc_test_absent_library: No module named"
    )


def test_amvicc_s_own_import_errors_keep_their_traceback() -> None:
    """A broken import inside amvicc is a bug to report, not the environment's."""
    with pytest.raises(ImportError) as raised:
        importlib.import_module("amvicc.no_such_module")
    assert broken_install(raised.value) is None
    with pytest.raises(ImportError) as raised:
        exec("from amvicc.store import no_such_name", {})
    assert broken_install(raised.value) is None
