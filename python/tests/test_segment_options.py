"""The shared vectors of core/testdata/segment_options.json, through the Python API: the options
given (``target`` and ``timeout`` in seconds), and the options in effect or the exact message."""
import pytest

import idforge
from conftest import load

VECTORS = load("segment_options.json")


def kwargs(given):
    """The keyword arguments for a row's options (Python takes seconds for the two times)."""
    out = {k: v for k, v in given.items() if k not in ("target_ms", "timeout_ms")}
    if "target_ms" in given:
        out["target"] = given["target_ms"] / 1000
    if "timeout_ms" in given:
        out["timeout"] = given["timeout_ms"] / 1000
    return out


def error_class(name):
    row = next(r for r in load("errors.json")["errors"] if r["name"] == name)
    return getattr(idforge, row["python"])


@pytest.mark.parametrize("row", VECTORS["valid"], ids=lambda r: repr(r["given"]))
def test_options_in_effect(row):
    got = idforge.Segments("memory:", "t", **kwargs(row["given"])).options()
    assert got == kwargs(row["resolved"])


@pytest.mark.parametrize("row", VECTORS["invalid"] + VECTORS["invalid_negative"], ids=lambda r: repr(r["given"]))
def test_options_out_of_bounds(row):
    with pytest.raises(error_class(row["error"])) as info:
        idforge.Segments("memory:", "t", **kwargs(row["given"]))
    assert str(info.value) == "invalid argument: " + row["message"]


def test_none_is_not_given():
    given = dict.fromkeys(["step", "max_step", "dynamic_step", "target", "prefetch_pct", "timeout"])
    got = idforge.Segments("memory:", "t", **given).options()
    assert got == kwargs(VECTORS["defaults"])


def test_seconds_round_to_whole_ms():
    # Below half a ms is 0 ms, out of bounds; NaN and infinity too.
    for bad in (0.0004, float("nan"), float("-inf")):
        with pytest.raises(idforge.InvalidArgumentError, match="target must be at least 1 ms"):
            idforge.Segments("memory:", "t", target=bad)
    with pytest.raises(idforge.InvalidArgumentError, match="timeout must be between 1 ms and 1 day"):
        idforge.Segments("memory:", "t", timeout=float("inf"))
