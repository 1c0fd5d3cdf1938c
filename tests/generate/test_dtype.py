"""The weights' dtype a run records is the dtype the pipeline holds, on every allowed diffusers.

diffusers 0.36 to 0.39 read only ``torch_dtype`` and silently ignore ``dtype``; 0.40 and later
read ``dtype``. These tests stand in such a release for the installed one, so they check the
rule whichever release the environment has.
"""

from __future__ import annotations

from typing import Any

import diffusers
import pytest
import torch
from packaging.version import Version

from amvicc.errors import UserError
from amvicc.generate import GenerationOptions, ProcessLayout, make_backend
from amvicc.generate import pipeline as pipeline_module

INSTALLED = diffusers.__version__
# What the installed release reads, to pass the emulated release's choice on to it.
INSTALLED_KEY = "dtype" if Version(INSTALLED).release[:2] >= (0, 40) else "torch_dtype"


def _emulate(monkeypatch: pytest.MonkeyPatch, version: str, reads: str | None) -> None:
    """Make diffusers look like ``version``, whose ``from_pretrained`` reads only ``reads``."""
    real = pipeline_module.pipeline_class

    def fake_class(spec: Any) -> Any:
        cls = real(spec)

        class Emulated:
            @staticmethod
            def from_pretrained(source: str, **kwargs: Any) -> Any:
                wanted = kwargs.pop(reads, None) if reads else None
                kwargs.pop("dtype", None)  # ignored silently, as 0.36-0.39 do
                kwargs.pop("torch_dtype", None)
                return cls.from_pretrained(
                    source, **{INSTALLED_KEY: wanted or torch.float32}, **kwargs
                )

        return Emulated

    monkeypatch.setattr(pipeline_module, "pipeline_class", fake_class)
    monkeypatch.setattr(diffusers, "__version__", version)


def _dtypes(pipe: Any) -> set[torch.dtype]:
    return {
        p.dtype
        for module in pipe.components.values()
        if isinstance(module, torch.nn.Module)
        for p in module.parameters()
    }


@pytest.mark.parametrize(("version", "reads"), [("0.38.0", "torch_dtype"), ("0.40.0", "dtype")])
def test_the_pipeline_loads_in_the_dtype_the_run_records(
    monkeypatch: pytest.MonkeyPatch, version: str, reads: str
) -> None:
    _emulate(monkeypatch, version, reads)
    backend = make_backend(
        GenerationOptions(model="tiny-sd3", dtype="bfloat16", progress=False), ProcessLayout()
    )
    backend.load()
    assert backend.outputs["dtype"] == "bfloat16"
    assert _dtypes(backend.pipe) == {torch.bfloat16}


def test_a_pipeline_in_another_dtype_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    _emulate(monkeypatch, "0.40.0", None)  # a release that reads neither keyword
    backend = make_backend(
        GenerationOptions(model="tiny-sd3", dtype="bfloat16", progress=False), ProcessLayout()
    )
    with pytest.raises(UserError, match=r"asked for bfloat16 weights.*float32"):
        backend.load()


def test_the_keyword_follows_the_release() -> None:
    assert pipeline_module.dtype_argument("0.36.0") == "torch_dtype"
    assert pipeline_module.dtype_argument("0.39.2") == "torch_dtype"
    assert pipeline_module.dtype_argument("0.40.0") == "dtype"
    assert pipeline_module.dtype_argument("0.42.1.dev0") == "dtype"
