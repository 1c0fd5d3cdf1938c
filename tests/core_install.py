"""The core install's promise, checked as a user meets it (a script, not a pytest module).

``pip install amvicc`` without extras must run the core verbs (catalogue, scenes, API answering
and an API image route against a local fake server, import, report, export) and must not hold
torch, diffusers, transformers, accelerate, gradio, onnxruntime or rapidocr; a verb or model that
needs an extra must say in one line which one (exit 2) and leave the workspace as it was.

Two callers, one check:

- ``python3 dev.py core`` runs it in ``.venv-core``, a venv holding ``pip install .`` alone,
  where those libraries really are absent;
- ``tests/test_extras.py`` runs it with ``--hide-extras`` in the test environment, where they
  are installed but hidden (a finder first on ``sys.meta_path`` answers "no such module" for
  them, to ``import`` and ``importlib.util.find_spec`` alike), so the suite catches a
  module-level import of one of them as well.

Exit status 0 when every check holds; otherwise the first failed check's message.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import io
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from importlib.util import find_spec
from pathlib import Path

# What the core must not hold (import names), and the extras that bring them.
HEAVY = (
    "torch",
    "torchvision",
    "diffusers",
    "transformers",
    "accelerate",
    "safetensors",
    "gradio",
    "onnxruntime",
    "rapidocr",
    "inspect_ai",
    "datasets",
)


def amvicc(*argv: str) -> tuple[int, str, str]:
    """``amvicc ARGV`` in this process: exit status, stdout, stderr."""
    from amvicc.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(argv))
        except SystemExit as leaving:  # argparse's own exits
            status = int(leaving.code or 0)
    return status, out.getvalue(), err.getvalue()


def runs(workspace: Path) -> list[str]:
    """The run ids in a workspace, oldest first."""
    from amvicc.store import Store

    with Store(workspace) as store:
        return [run.run_id for run in store.runs()]


def check(what: str, condition: bool, detail: str = "") -> None:
    """Print ``ok: what`` or stop with the failure."""
    if not condition:
        sys.exit(f"core install check FAILED: {what}\n{detail}")
    print(f"ok: {what}", flush=True)


def succeeds(what: str, *argv: str) -> str:
    """Run a verb that must work here; its stdout."""
    status, out, err = amvicc(*argv)
    check(f"{what} (amvicc {argv[0]})", status == 0, f"exit {status}\n{err[-3000:]}")
    return out


def names_extra(what: str, extra: str, workspace: Path, *argv: str) -> None:
    """Run a verb that needs ``extra``: one line naming it, exit 2, the workspace unchanged."""
    before = runs(workspace)
    status, _, err = amvicc(*argv)
    lines = err.strip().splitlines()
    check(
        f"{what} names amvicc[{extra}] in one line, exit 2",
        status == 2 and len(lines) == 1 and f"amvicc[{extra}]" in lines[0],
        f"exit {status}\n{err[-3000:]}",
    )
    check(f"{what} leaves the workspace as it was", runs(workspace) == before)
    print(f"    {lines[0]}")


class HideExtras(importlib.abc.MetaPathFinder):
    """Makes the heavy libraries look uninstalled in this process (none is imported yet).

    Not ``sys.modules[name] = None``: libraries such as SciPy look a module up there and
    expect a module object when the key is present.
    """

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        """Refuse the heavy libraries and their submodules; leave the rest to the others."""
        if name.partition(".")[0] in HEAVY:
            raise ModuleNotFoundError(f"No module named {name!r} (hidden)", name=name)


def heavy_absent(hidden: bool) -> None:
    """``import torch`` (and every other heavy library) fails here."""
    for name in HEAVY:
        try:
            __import__(name)
        except ImportError:
            continue
        check(f"import {name} fails", False, f"{name} is importable in the core install")
    check("import torch, diffusers, transformers, gradio, onnxruntime, ... all fail", True)
    if not hidden:
        found = [name for name in HEAVY if find_spec(name) is not None]
        check("no heavy library is installed at all", not found, ", ".join(found))


def core_verbs(folder: Path, workspace: Path, images: Path, server_url: str) -> None:
    """The verbs the core promises, each run as a user would."""
    succeeds("the catalogue checks", "prompts", "-q", "check")
    listed = json.loads(succeeds("the model list", "models", "--format", "json"))
    tiny = {row["name"]: row for row in listed["image"]}["tiny-sd3"]
    check("amvicc models says tiny-sd3 needs the local extra", tiny["extra"] == "local")
    scenes = folder / "scenes"
    succeeds("scenes build", "scenes", "-q", "build", "--out", str(scenes), "--per-category", "1")
    check("scenes build wrote its catalogue", (scenes / "catalogue.csv").is_file())
    answers = folder / "answers.csv"
    rows = [f"{i},({'a' if i % 2 else 'b'})" for i in range(1, 21)]
    answers.write_text("index,response\n" + "\n".join(rows) + "\n")
    store = ("--store", str(workspace))
    succeeds("import-answers", "import-answers", str(answers), "--model", "elsewhere", *store)
    api = ("--base-url", server_url, "-q", *store)
    succeeds(
        "answer through an API",
        *("answer", "--model", "openai:gpt-4o", "--images", str(images), "--index", "1-4", *api),
    )
    succeeds(
        "generate through an API image route",
        *("generate", "--model", "openai:gpt-image-1", "--index", "1-2", "--run", "api-images"),
        *api,
    )
    report = folder / "report.html"
    succeeds("report", "report", "-q", *store, "-o", str(report))
    check("the report was written", report.stat().st_size > 10_000)
    csv = succeeds("report as CSV", "report", "-q", *store, "--format", "csv")
    check("the CSV report has the imported model", "elsewhere" in csv)
    exported = folder / "verdicts.csv"
    succeeds("score export", "score", "export", *store, "-o", str(exported))
    check("the verdicts were exported", exported.is_file())


def extras_named(folder: Path, workspace: Path, images: Path, server_url: str) -> None:
    """What needs an extra says which, in one line, before touching the workspace."""
    store = ("--store", str(workspace))
    names_extra(
        "generate --model tiny-sd3", "local", workspace, "generate", "--model", "tiny-sd3", *store
    )
    mmvp = ("--images", str(images), "--index", "1-4", *store)
    names_extra(
        "answer --model tiny-llava", "local", workspace, "answer", "--model", "tiny-llava", *mmvp
    )
    hf = "hf:llava-hf/llava-1.5-7b-hf"
    names_extra(f"answer --model {hf}", "local", workspace, "answer", "--model", hf, *mmvp)
    names_extra("score (serve)", "score", workspace, "score", "--port", "7861", *store)
    names_extra(
        "judge --method ocr",
        "ocr",
        workspace,
        "judge",
        "--run",
        "api-images",
        "--method",
        "ocr",
        *store,
    )
    names_extra("demo", "local,ocr", workspace, "demo", "--store", str(folder / "demo"))
    names_extra(
        "answer --hf-dataset",
        "hf-datasets",
        workspace,
        *("answer", "--model", "openai:gpt-4o", "--base-url", server_url),
        *("--hf-dataset", "MMVP/MMVP", "--index", "1-4", *store),
    )


def console_script() -> None:
    """The installed ``amvicc`` command starts (its entry point, not only the package)."""
    command = Path(sys.executable).with_name("amvicc")
    if not command.exists():  # not a venv with the console script (e.g. run from a checkout)
        return
    done = subprocess.run([command, "--help"], capture_output=True, text=True, check=False)
    check("the amvicc command starts", done.returncode == 0 and "generate" in done.stdout)


def main(argv: Sequence[str]) -> int:
    """Run every check in a temporary folder."""
    hidden = "--hide-extras" in argv
    if hidden:
        loaded = [name for name in HEAVY if name in sys.modules]
        check("no heavy library is imported before the check", not loaded, ", ".join(loaded))
        sys.meta_path.insert(0, HideExtras())
    os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")
    os.environ.pop("OPENAI_API_KEY", None)  # the fake server takes any key
    from amvicc.testing.fake_openai import FakeOpenAIServer
    from amvicc.testing.mmvp_images import write_mmvp_images

    heavy_absent(hidden)
    with tempfile.TemporaryDirectory(prefix="amvicc-core-") as temp, FakeOpenAIServer() as fake:
        folder = Path(temp)
        workspace, images = folder / "ws", write_mmvp_images(folder / "mmvp", range(1, 5))
        core_verbs(folder, workspace, images, fake.url)
        extras_named(folder, workspace, images, fake.url)
    console_script()
    print("the core install holds: core verbs run, extras are named when missing")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
