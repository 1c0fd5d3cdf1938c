#!/usr/bin/env python3
"""The quickstart's two commands, each setting up what it needs in ./.venv first.

    python3 dev.py demo    # the main job, offline, on embedded defaults
    python3 dev.py test    # ruff, mypy, lint-imports, the test suite, the bare-core check, then
                           # the fast tests at the lowest allowed versions (what CI runs)
    python3 dev.py core    # `pip install .` without extras runs the core verbs, holds no torch
    python3 dev.py lowest  # the fast tests on the lowest versions pyproject.toml allows (CI too)

Both setups install every extra (``.[all]`` for the demo, ``.[test]``, which pulls ``[all]``).

Only Python 3.11+ and pip are needed. Set AMVICC_TORCH to install another torch build
(default: torch==2.13.0, the CPU build these machines carry; on a GPU machine use your CUDA one).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"
LOWEST = ROOT / ".venv-lowest"
LOWEST_PYTHON = LOWEST / ("Scripts" if os.name == "nt" else "bin") / "python"
CORE = ROOT / ".venv-core"
CORE_PYTHON = CORE / ("Scripts" if os.name == "nt" else "bin") / "python"


def _run(*command: str | Path, **kwargs: object) -> None:
    print("+", " ".join(str(c) for c in command), flush=True)
    result = subprocess.run([str(c) for c in command], cwd=ROOT, check=False, **kwargs)  # type: ignore[call-overload]
    if result.returncode:
        sys.exit(result.returncode)


def _pyproject_digest() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()


def _has_module(module: str) -> bool:
    probe = subprocess.run([PYTHON, "-c", f"import {module}"], capture_output=True, check=False)
    return probe.returncode == 0


def setup(extra: str | None) -> None:
    """Create .venv and install amvicc (editable) with ``extra``; skipped when up to date."""
    if sys.version_info < (3, 11):  # noqa: UP036 (dev.py runs before any check of the version)
        sys.exit(f"amvicc needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    if not PYTHON.exists():
        print(f"creating {VENV}", flush=True)
        venv.create(VENV, with_pip=True)
    digest = _pyproject_digest()
    stamp = VENV / f".amvicc-installed-{extra or 'base'}"
    if stamp.exists() and stamp.read_text() == digest and _has_module("amvicc"):
        return
    pip = [PYTHON, "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    if not _has_module("torch"):
        _run(*pip, os.environ.get("AMVICC_TORCH", "torch==2.13.0"))
    target = f".[{extra}]" if extra else "."
    _run(*pip, "-e", target)
    stamp.write_text(digest)


def _ensure_chromium() -> None:
    """The browser test drives Debian's chromium; install it where we may (CI runs as root)."""
    if shutil.which("chromium") or not shutil.which("apt-get"):
        return
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        print("note: install Debian's chromium for the browser test (apt-get install chromium)")
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    _run("apt-get", "update", "-qq", env=env)
    _run("apt-get", "install", "-y", "-qq", "chromium", env=env)


def demo() -> None:
    """Run the offline demo on embedded defaults."""
    setup("all")
    _run(BIN / "amvicc", "demo", *sys.argv[2:])


def test() -> None:
    """Lint, type-check, check the layering (lint-imports) and run the whole test suite."""
    setup("test")
    _ensure_chromium()
    _run(BIN / "ruff", "check", ".")
    _run(BIN / "ruff", "format", "--check", ".")
    _run(BIN / "mypy", "amvicc")
    _run(BIN / "lint-imports")
    _run(PYTHON, "-m", "pytest", *sys.argv[2:])
    # The core install is a promise too: no torch, gradio or onnxruntime, and its verbs run.
    core()
    # A floor in pyproject.toml is a tested promise: the fast tests again at the lowest versions.
    lowest()


def core() -> None:
    """``pip install .`` without extras, in .venv-core: the core verbs run, torch is absent.

    The venv is made afresh, and the core's dependencies resolved as a user's pip would, when
    pyproject.toml changes (so nothing a former version needed lingers); otherwise only this
    checkout's amvicc is reinstalled. tests/core_install.py then runs the core verbs there
    (catalogue, scenes, API answering and images against a local fake server, import, report,
    export), checks that ``import torch`` and the other extras' imports fail, and that what
    needs an extra (``generate --model tiny-sd3``, ``score``, ``judge --method ocr``, ...)
    names it in one line.
    """
    digest = _pyproject_digest()
    stamp = CORE / ".amvicc-core-installed"
    pip = [CORE_PYTHON, "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    if stamp.exists() and stamp.read_text() == digest and CORE_PYTHON.exists():
        _run(*pip, "--no-deps", "--force-reinstall", ".")
    else:
        print(f"creating {CORE} (pip install . without extras)", flush=True)
        shutil.rmtree(CORE, ignore_errors=True)
        venv.create(CORE, with_pip=True)
        _run(*pip, ".")
        stamp.write_text(digest)
    # -I: the installed copy, never this checkout on the path.
    _run(CORE_PYTHON, "-I", ROOT / "tests" / "core_install.py")


def lowest() -> None:
    """The fast tests in a second environment holding the lowest allowed direct dependencies.

    A floor in pyproject.toml is a promise; this keeps it. uv resolves every direct dependency
    to its lowest allowed version (``--resolution lowest-direct``), except torch, which stays
    at the build AMVICC_TORCH names (default: the CPU build these machines carry): an old torch
    from the index pulls gigabytes of CUDA libraries.
    """
    if not LOWEST_PYTHON.exists():
        print(f"creating {LOWEST}", flush=True)
        venv.create(LOWEST, with_pip=True)
    pip = [LOWEST_PYTHON, "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    _run(*pip, os.environ.get("AMVICC_TORCH", "torch==2.13.0"), "uv")
    probe = [LOWEST_PYTHON, "-c", "import torch; print(torch.__version__.split('+')[0])"]
    version = subprocess.run(probe, capture_output=True, text=True, check=True).stdout.strip()
    override = LOWEST / "torch-override.txt"
    override.write_text(f"torch=={version}\n")
    uv = [LOWEST_PYTHON, "-m", "uv", "pip", "install", "--python", LOWEST_PYTHON, "-q"]
    _run(*uv, "--resolution", "lowest-direct", "--override", override, "-e", ".[test]")
    _run(LOWEST_PYTHON, "-m", "uv", "pip", "list", "--python", LOWEST_PYTHON)
    marks = "not slow and not browser"
    _run(LOWEST_PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", marks, *sys.argv[2:])
    # The core allows an older openai than [inspect] (Inspect's openai-api needs 3.4), so the
    # resolution above never holds the core's floor: its API clients' tests run on it apart.
    floor = _core_floor("openai")
    _run(*uv, f"openai=={floor}")
    try:
        _run(LOWEST_PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", *OPENAI_CLIENT_TESTS)
    finally:
        _run(*uv, "--resolution", "lowest-direct", "--override", override, "-e", ".[test]")


# The tests of every module that imports openai (amvicc/api.py and the clients built on it).
OPENAI_CLIENT_TESTS = (
    "tests/vlm/test_openai_chat.py",
    "tests/generate/test_api.py",
    "tests/generate/test_openrouter_images.py",
)


def _core_floor(package: str) -> str:
    """The lowest version of ``package`` the core dependencies in pyproject.toml allow."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for requirement in project["dependencies"]:
        name, _, floor = requirement.partition(">=")
        if name.strip() == package:
            return floor.split(",")[0].strip()
    raise SystemExit(f"pyproject.toml: no {package}>= floor among the core dependencies")


TASKS = {"demo": demo, "test": test, "core": core, "lowest": lowest}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in TASKS:
        sys.exit(f"usage: python3 dev.py {{{','.join(TASKS)}}} [extra arguments]")
    TASKS[sys.argv[1]]()
