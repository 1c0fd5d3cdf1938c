"""VLM providers from other packages: the ``amvicc.providers`` entry-point group.

The example plugin (``tests/plugins/amvicc-example-provider``, its own pyproject) is installed
with pip into a temporary folder and used as a user would; the fast tests put a distribution's
metadata on ``sys.path`` by hand, which is what ``importlib.metadata`` reads either way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from amvicc.api import ApiSettings
from amvicc.cli import main
from amvicc.errors import UserError
from amvicc.store import Store
from amvicc.testing.fake_openai import FakeOpenAIServer
from amvicc.testing.mmvp_images import reply_by_index
from amvicc.vlm import open_vlm
from amvicc.vlm import providers as registry
from amvicc.vlm.openai_chat import OpenAIChatVLM

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "tests" / "plugins" / "amvicc-example-provider"
SECRET = "ex-test-key-do-not-leak-4242"


@pytest.fixture(autouse=True)
def _fresh_plugins() -> Iterator[None]:
    """Each test reads the entry points anew (they are read once per process)."""
    registry.plugin_providers.cache_clear()
    yield
    registry.plugin_providers.cache_clear()


def distribution(folder: Path, name: str, entry_points: dict[str, str]) -> Path:
    """Installed-package metadata declaring ``entry_points`` in the providers group."""
    info = folder / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    lines = [f"{key} = {value}" for key, value in entry_points.items()]
    (info / "entry_points.txt").write_text("[amvicc.providers]\n" + "\n".join(lines) + "\n")
    return folder


@pytest.fixture
def example_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example plugin's code and an installed distribution naming it."""
    monkeypatch.syspath_prepend(str(PLUGIN))
    site = distribution(
        tmp_path / "site",
        "amvicc-example-provider",
        {"example": "amvicc_example_provider:PROVIDER"},
    )
    monkeypatch.syspath_prepend(str(site))


def vlm_rows(capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, dict[str, str]], list[str]]:
    """``amvicc models``' VLM rows by name, and the lines it wrote to stderr."""
    assert main(["models", "--kind", "vlm", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    return {row["name"]: row for row in json.loads(out)["vlm"]}, err.splitlines()


@pytest.mark.usefixtures("example_plugin")
def test_a_plugin_provider_is_listed_and_opens(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rows, err = vlm_rows(capsys)
    assert err == []
    assert rows["example:<model>"]["route"] == "example"
    assert rows["example:<model>"]["key_env"] == "EXAMPLE_API_KEY"
    assert rows["example:vision-1"]["notes"] == "Example Cloud's vision model"
    assert rows["example:vision-1"]["runs_with"] == "Example Cloud chat completions"
    assert "openrouter:x-ai/grok-4" in rows  # the built-in ones are all still there
    monkeypatch.setenv("EXAMPLE_API_KEY", SECRET)
    vlm = open_vlm("example:vision-1")
    assert isinstance(vlm, OpenAIChatVLM)
    assert (vlm.name, vlm.model) == ("example:vision-1", "vision-1")
    assert vlm.describe()["base_url"] == "https://api.example.invalid/v1"
    assert vlm.describe()["api_key_env"] == "EXAMPLE_API_KEY"
    monkeypatch.delenv("EXAMPLE_API_KEY")
    with pytest.raises(UserError, match="EXAMPLE_API_KEY is not set"):
        open_vlm("example:vision-1")


@pytest.mark.usefixtures("example_plugin")
def test_a_plugin_answers_through_the_cli(
    tmp_path: Path, images: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXAMPLE_API_KEY", SECRET)
    with FakeOpenAIServer(chat=reply_by_index(lambda i: "(a)" if i % 2 else "(b)")) as fake:
        argv = ["answer", "--model", "example:vision-1", "--base-url", fake.url, "-q"]
        argv += ["--images", str(images), "--index", "1-4", "--store", str(tmp_path / "ws")]
        assert main(argv) == 0
    asked = [r for r in fake.requests if r.path.endswith("/chat/completions")]
    assert [r.body["model"] for r in asked] == ["vision-1"] * 4
    assert {r.authorization for r in asked} == {f"Bearer {SECRET}"}
    with Store(tmp_path / "ws") as store:
        (run,) = store.runs(stage="answer")
        assert run.model == "example:vision-1"
        assert len(store.responses(run_id=run.run_id)) == 4


def test_built_in_names_never_read_the_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    def unreadable(**_: object) -> list[object]:
        raise AssertionError("entry points read for a built-in name")

    monkeypatch.setattr(registry, "entry_points", unreadable)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    assert open_vlm("openai:gpt-4o").name == "openai:gpt-4o"
    assert open_vlm("openrouter:x-ai/grok-4").name == "openrouter:x-ai/grok-4"
    local = ApiSettings(base_url="http://127.0.0.1:9/v1")
    # Any name at a base URL is the compatible server's, once no plugin claims its prefix.
    with pytest.raises(AssertionError, match="entry points read"):
        open_vlm("llava:13b", api=local)


def test_broken_plugins_are_one_warning_line_each(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.syspath_prepend(str(PLUGIN))
    # A plugin taking a built-in provider's name: the example provider renamed.
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "amvicc_clashing_plugin.py").write_text(
        "import dataclasses\n"
        "from amvicc_example_provider import PROVIDER as EXAMPLE\n"
        "PROVIDER = dataclasses.replace(EXAMPLE, name='openai')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    site = distribution(
        tmp_path / "site",
        "amvicc-broken-plugins",
        {
            "missing": "amvicc_no_such_module:PROVIDER",
            "not-a-provider": "json:dumps",
            "clash": "amvicc_clashing_plugin:PROVIDER",
        },
    )
    monkeypatch.syspath_prepend(str(site))
    rows, warnings = vlm_rows(capsys)
    assert len(warnings) == 3, warnings
    by_plugin = {line.split("'")[1]: line for line in warnings}
    assert "ModuleNotFoundError: No module named 'amvicc_no_such_module'" in by_plugin["missing"]
    assert "names no amvicc.vlm.providers.Provider" in by_plugin["not-a-provider"]
    assert "the name 'openai' is already taken" in by_plugin["clash"]
    assert "amvicc-broken-plugins" in by_plugin["missing"]
    # The listing goes on without them, the built-in openai provider untouched.
    assert rows["openai:<model>"]["runs_with"] == "OpenAI chat completions"
    assert not any(row["route"] not in _BUILT_IN for row in rows.values())
    with pytest.raises(UserError, match="unknown model 'missing:x'"):
        open_vlm("missing:x")


_BUILT_IN = {provider.name for provider in registry.PROVIDERS}


def test_a_plugin_whose_model_listing_fails_keeps_its_own_row(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "amvicc_flaky_plugin.py").write_text(
        "from amvicc.vlm.providers import Provider\n"
        "def known():\n    raise RuntimeError('catalogue service down')\n"
        "PROVIDER = Provider(name='flaky', pattern='flaky:<model>', kind='api', "
        "runs_with='Flaky chat', source='flaky.invalid', models='amvicc_flaky_plugin:known', "
        "opener='amvicc_flaky_plugin:nowhere')\n"
    )
    site = distribution(
        tmp_path / "site", "amvicc-flaky", {"flaky": "amvicc_flaky_plugin:PROVIDER"}
    )
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    monkeypatch.syspath_prepend(str(site))
    rows, warnings = vlm_rows(capsys)
    assert rows["flaky:<model>"]["runs_with"] == "Flaky chat"
    assert warnings == [
        "amvicc: provider plugin 'flaky' cannot list its models (RuntimeError: catalogue "
        "service down)"
    ]
    # An opener that is not there is one line too, not a traceback.
    with pytest.raises(UserError, match="provider 'flaky' cannot load its opener"):
        open_vlm("flaky:m1")


@pytest.mark.slow
def test_the_example_package_installed_with_pip(tmp_path: Path, images: Path) -> None:
    """The example plugin built and installed by pip, then used from the command line."""
    target = tmp_path / "site"
    install = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "-q"]
    subprocess.run([*install, "--target", str(target), str(PLUGIN)], check=True)
    assert (target / "amvicc_example_provider" / "backend.py").is_file()
    env = {k: v for k, v in os.environ.items() if k != "EXAMPLE_API_KEY"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(target), env.get("PYTHONPATH")]))
    amvicc = [sys.executable, "-m", "amvicc"]

    def run(*argv: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*amvicc, *argv], env={**env, **extra}, capture_output=True, text=True, check=False
        )

    listed = run("models", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)["vlm"]}
    assert rows["example:vision-1"]["route"] == "example"
    assert "example:<model>" in run("models", "--kind", "vlm").stdout

    workspace = tmp_path / "ws"
    with FakeOpenAIServer(chat=reply_by_index(lambda i: "(a)")) as fake:
        ask = ("answer", "--model", "example:vision-1", "--base-url", fake.url, "-q")
        where = ("--images", str(images), "--index", "1-2", "--store", str(workspace))
        missing_key = run(*ask, *where)
        answered = run(*ask, *where, EXAMPLE_API_KEY=SECRET)
    assert missing_key.returncode == 2
    assert missing_key.stderr.strip().splitlines() == [
        "amvicc answer: error: environment variable EXAMPLE_API_KEY is not set; export your API "
        "key in it (or name another variable with --api-key-env)"
    ]
    assert answered.returncode == 0, answered.stderr
    assert [r.body["model"] for r in fake.requests] == ["vision-1", "vision-1"]
    assert SECRET not in answered.stdout + answered.stderr
