"""Tokens and cost per model, where the route reports usage; prices from the user's file.

amvicc ships no prices (they change, and differ per account): ``--prices FILE`` names a YAML
file such as::

    currency: USD
    models:
      openai:gpt-4o:
        input_per_million: 2.50     # per million prompt tokens
        output_per_million: 10.00   # per million completion tokens
      "DALL·E 3":
        per_image: 0.040            # per image requested
      "hf:*":                       # glob patterns match too (the first match wins)
        per_request: 0

Every stored request of a model's configuration on the report's questions counts — retries
and failed requests were paid for too. A cost that needs token counts is only partial when
some requests reported none; the table says how many did.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from amvicc.errors import UserError
from amvicc.files import UnreadableFile, UnsafeYAML, load_yaml, read_regular_file
from amvicc.report.entries import ModelEntry
from amvicc.report.items import Items
from amvicc.report.subjects import encode

PRICE_KEYS = ("input_per_million", "output_per_million", "per_image", "per_request")
# No price of a million tokens, an image or a request comes near this; a larger number is a
# typo (or a hostile file) that would print as an absurd cost.
MAX_PRICE = 1e6
MAX_PRICES_FILE = 1 << 20
USAGE_COLUMNS = [
    "entry",
    "label",
    "modality",
    "smoke",
    "requests",
    "failed",
    "with_usage",
    "prompt_tokens",
    "completion_tokens",
    "price",
    "cost",
    "cost_requests",
    "note",
]


@dataclass(frozen=True)
class Prices:
    """Prices per model name or glob pattern, in one currency."""

    currency: str
    models: tuple[tuple[str, Mapping[str, float]], ...]

    def of(self, model: str) -> Mapping[str, float] | None:
        """The prices of a model: its exact name first, else the first matching pattern."""
        for name, price in self.models:
            if name == model:
                return price
        for name, price in self.models:
            if fnmatch.fnmatchcase(model, name):
                return price
        return None


def load_prices(path: Path) -> Prices:
    """Read a prices file (see the module docstring).

    Read as plain YAML without aliases or non-finite numbers (:func:`amvicc.files.load_yaml`),
    from a regular file of at most 1 MiB.

    Raises:
        UserError: the file is missing, is not YAML of that shape, or has a price that is not
            a number from 0 to :data:`MAX_PRICE`.
    """
    import yaml

    try:
        text = read_regular_file(path, limit=MAX_PRICES_FILE).decode("utf-8")
        data = load_yaml(text)
    except FileNotFoundError:
        raise UserError(f"--prices {path} does not exist; check the path") from None
    except (OSError, UnicodeDecodeError, UnreadableFile) as err:
        raise UserError(f"--prices {path} cannot be read: {err}") from None
    except UnsafeYAML as err:
        raise UserError(
            f"--prices {path}: {err}; a price is a number from 0 to {MAX_PRICE:g}"
        ) from None
    except yaml.YAMLError as err:
        raise UserError(f"--prices {path} is not valid YAML: {str(err).splitlines()[0]}") from None
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise UserError(
            f"--prices {path} needs a 'models:' mapping of model name -> prices "
            f"({', '.join(PRICE_KEYS)})"
        )
    models = []
    for name, price in data["models"].items():
        if not isinstance(price, dict) or not price:
            raise UserError(f"--prices {path}: model {name!r} needs a mapping of prices")
        checked: dict[str, float] = {}
        for key, value in price.items():
            if key not in PRICE_KEYS:
                raise UserError(
                    f"--prices {path}: model {name!r} has an unknown price {key!r}; use "
                    f"{', '.join(PRICE_KEYS)}"
                )
            if not _price(value):
                shown = f"{str(value)[:20]}…" if len(str(value)) > 20 else repr(value)
                raise UserError(
                    f"--prices {path}: model {name!r} {key} is {shown}, not a number >= 0 "
                    f"(and at most {MAX_PRICE:g})"
                )
            checked[str(key)] = float(value)
        models.append((str(name), checked))
    return Prices(currency=str(data.get("currency", "")), models=tuple(models))


def _price(value: object) -> bool:
    """Whether a YAML value is a usable price: a finite number from 0 to :data:`MAX_PRICE`."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return 0 <= value <= MAX_PRICE and math.isfinite(value)


def usage_table(raw: pd.DataFrame, items: Items, prices: Prices | None) -> pd.DataFrame:
    """Requests, tokens and (with prices) cost per model, over the report's questions.

    ``raw``: :meth:`Store.usage_frame` of these models or more (other models' rows are not
    counted): read once for every model, both parts of a report share it.

    Returns:
        :data:`USAGE_COLUMNS`; ``cost`` is NaN without a price, ``cost_requests`` counts
        the requests the cost covers and ``note`` says what is left out.
    """
    entries = [e for e in items.entries if not e.imported]
    if not entries:
        return pd.DataFrame(columns=USAGE_COLUMNS)
    counted = ["requests", "failed", "with_usage", "prompt_tokens", "completion_tokens"]
    sums = _sums(raw, items, entries, counted)
    rows = []
    for entry in entries:
        totals = dict(zip(counted, sums[entry.key], strict=True))
        price = prices.of(entry.model) if prices is not None else None
        cost, covered, note = _cost(price, totals, entry.modality)
        rows.append(
            {
                "entry": entry.key,
                "label": entry.label,
                "modality": entry.modality,
                "smoke": entry.smoke,
                **totals,
                "price": _describe(price, prices.currency if prices else ""),
                "cost": cost,
                "cost_requests": covered,
                "note": note,
            }
        )
    return pd.DataFrame(rows, columns=USAGE_COLUMNS)


def _sums(
    raw: pd.DataFrame, items: Items, entries: list[ModelEntry], counted: list[str]
) -> dict[str, list[int]]:
    """Per model, the ``counted`` columns of ``raw`` summed over the questions it was asked.

    ``raw``: :meth:`Store.usage_frame`, one row per configuration, question and subject. A
    question counts when the model has an item on it; matched by integer codes (a table of
    model by question), not by hashing every (configuration, question) pair.
    """
    keys = [e.key for e in entries]
    encoded = encode(items.frame["entry"])
    frame_codes, frame_keys = encoded.codes, encoded.names()
    questions = items.frame["question_index"].to_numpy(dtype="int64")
    width = int(questions.max()) + 1 if len(questions) else 0
    asked = np.zeros((len(frame_keys), width), dtype=bool)
    asked[frame_codes, questions] = True
    model = encoded.find(raw["config_key"])
    question = raw["question_index"].to_numpy(dtype="int64")
    mine = (model >= 0) & (question >= 0) & (question < width)
    mine[mine] = asked[model[mine], question[mine]]
    chosen = pd.Index(keys, dtype=object).get_indexer(pd.Index(frame_keys, dtype=object))[
        model[mine]
    ]
    found = chosen >= 0
    sums = []
    for name in counted:
        values = np.asarray(pd.to_numeric(raw[name].to_numpy(dtype=object)[mine]))
        total = np.zeros(len(keys), dtype=values.dtype if len(values) else "int64")
        np.add.at(total, chosen[found], values[found])  # in row order, as a groupby sums
        sums.append([int(v) for v in total.tolist()])
    return {key: [column[i] for column in sums] for i, key in enumerate(keys)}


def _cost(
    price: Mapping[str, float] | None, totals: dict[str, int], modality: str
) -> tuple[float, int, str]:
    requests = totals["requests"]
    if not requests:
        return math.nan, 0, "no requests stored"
    if price is None:
        return math.nan, 0, "no price given"
    cost = price.get("per_request", 0.0) * requests
    if modality == "igm":
        cost += price.get("per_image", 0.0) * requests
    per_token = "input_per_million" in price or "output_per_million" in price
    covered = requests
    note = ""
    if per_token:
        covered = totals["with_usage"]
        cost += price.get("input_per_million", 0.0) * totals["prompt_tokens"] / 1e6
        cost += price.get("output_per_million", 0.0) * totals["completion_tokens"] / 1e6
        if covered < requests:
            note = f"partial: {requests - covered} of {requests} request(s) reported no token usage"
    return cost, covered, note


def _describe(price: Mapping[str, Any] | None, currency: str) -> str:
    if not price:
        return ""
    unit = f" {currency}" if currency else ""
    names = {
        "input_per_million": "per M input tokens",
        "output_per_million": "per M output tokens",
        "per_image": "per image",
        "per_request": "per request",
    }
    return ", ".join(f"{value:g}{unit} {names[key]}" for key, value in price.items())
