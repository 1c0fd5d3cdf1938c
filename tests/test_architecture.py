"""The layering covers every package: a new one without a layer fails here, not silently."""

from __future__ import annotations

import pkgutil
import tomllib
from pathlib import Path

import amvicc

ROOT = Path(__file__).resolve().parent.parent


def _contracts() -> list[dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts: list[dict[str, object]] = config["tool"]["importlinter"]["contracts"]
    return contracts


def _layered() -> set[str]:
    (layers,) = [c for c in _contracts() if c["type"] == "layers"]
    entries = layers["layers"]
    assert isinstance(entries, list)
    return {name.strip() for layer in entries for name in str(layer).split("|")}


def test_every_module_and_package_of_amvicc_has_a_layer() -> None:
    children = {f"amvicc.{m.name}" for m in pkgutil.iter_modules(amvicc.__path__)}
    children.add("amvicc.__main__")
    missing = sorted(children - _layered())
    assert not missing, f"add {missing} to a layer of [tool.importlinter] in pyproject.toml"


def test_no_layer_names_a_module_that_is_gone() -> None:
    children = {f"amvicc.{m.name}" for m in pkgutil.iter_modules(amvicc.__path__)}
    assert _layered() - children - {"amvicc.__main__"} == set()


def test_the_cli_is_forbidden_to_every_module_without_a_list_to_keep() -> None:
    (forbidden,) = [c for c in _contracts() if c["type"] == "forbidden"]
    assert forbidden["source_modules"] == ["amvicc.*"]
    assert forbidden["forbidden_modules"] == ["amvicc.cli"]


def test_a_verb_is_named_once_by_its_module(tmp_path: Path) -> None:
    """Each verb's name is its module's; each has a ``python -m amvicc.<name>`` module."""
    from amvicc.cli import load_verbs

    verbs = load_verbs()
    modules = {m.name for m in pkgutil.iter_modules([str(ROOT / "amvicc" / "cli")])}
    assert {name.replace("-", "_") for name in verbs} <= modules
    for name, verb in verbs.items():
        assert verb.run.__module__ == f"amvicc.cli.{name.replace('-', '_')}"
        assert (ROOT / "amvicc" / name.replace("-", "_") / "__main__.py").is_file(), name


def test_no_function_in_amvicc_is_over_100_lines() -> None:
    import ast

    long = []
    for path in sorted((ROOT / "amvicc").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                lines = node.end_lineno - node.lineno + 1
                if lines > 100:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines})")
    assert not long, long
