from __future__ import annotations

import math

import pytest
from sklearn.metrics import cohen_kappa_score

from amvicc.agreement import cohen_kappa, fleiss_kappa, percent_agreement, resolve


def test_resolution_order() -> None:
    assert resolve(["correct", "incorrect"], adjudicated="incorrect").value == "incorrect"
    assert resolve(["correct", "incorrect"], adjudicated="incorrect").disagreement
    assert resolve(["correct", "correct"]).how == "unanimous"
    majority = resolve(["correct", "incorrect", "correct"])
    assert (majority.value, majority.how, majority.disagreement) == ("correct", "majority", True)
    tie = resolve(["correct", "incorrect"])
    assert (tie.value, tie.how) == (None, "tie")
    assert resolve([]).how == "none"


def test_percent_and_cohen_match_hand_and_sklearn() -> None:
    a = ["c", "c", "i", "i", "c", "c"]
    b = ["c", "i", "i", "i", "c", "c"]
    assert percent_agreement(a, b) == pytest.approx(5 / 6)
    # By hand: po = 5/6; pe = (4/6)(3/6) + (2/6)(3/6) = 1/2; kappa = (5/6 - 1/2) / (1/2) = 2/3.
    assert cohen_kappa(a, b) == pytest.approx(2 / 3)
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))
    assert math.isnan(cohen_kappa(["c", "c"], ["c", "c"]))
    with pytest.raises(ValueError, match="same items"):
        percent_agreement(["c"], [])


def test_fleiss_by_hand() -> None:
    # Items: [2,0], [0,2], [1,1] over two labels, 2 raters each.
    # P_i = 1, 1, 0 -> P-bar = 2/3; p_j = 1/2, 1/2 -> Pe = 1/2; kappa = (2/3 - 1/2)/(1/2) = 1/3.
    ratings = [["c", "c"], ["i", "i"], ["c", "i"]]
    assert fleiss_kappa(ratings) == pytest.approx(1 / 3)
    assert math.isnan(fleiss_kappa([["c", "c", "c"]]))
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([["c"], ["c", "i"]])
