"""``benchmarks/local_answer.py`` runs end to end in a tiny configuration (issue 23).

Only that it runs and prints its lines is tested: the speed target lives in the script's
``vs_bare_loop`` line, never in a timed test.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_benchmark_runs_and_prints_its_ratio_lines() -> None:
    tiny = ["--questions", "3", "--batch-size", "2", "--max-tokens", "3", "--rounds", "1",
            "--image-size", "48"]  # fmt: skip
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "local_answer.py"), *tiny],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"},
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert "tiny-llava, 3 questions, batch size 2, max_new_tokens 3" in lines[0]
    assert "same replies: yes" in lines  # amvicc and the bare loop did the same work
    assert re.fullmatch(r"cpu_vs_bare_loop: \d+\.\d{3}", lines[-2])
    assert re.fullmatch(r"vs_bare_loop: \d+\.\d{3}", lines[-1])
