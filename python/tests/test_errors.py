"""Every row of errors.json: the class exists, has the code, name and bases; the native module's
codes are the same list; errors raised by the native code are instances of the right class."""
import builtins

import pytest

import idforge
from conftest import load

ERRORS = load("errors.json")


@pytest.mark.parametrize("row", ERRORS["errors"], ids=lambda r: r["name"])
def test_every_row_has_its_class(row):
    cls = getattr(idforge, row["python"])
    assert cls.code == row["code"]
    # The number under the name Node.js (`error.status`), Kotlin and C use for it.
    assert cls.status == row["code"]
    assert cls.name == row["name"]
    assert issubclass(cls, idforge.IdforgeError)
    for base in row["python_bases"]:
        assert issubclass(cls, getattr(builtins, base)), base
    assert cls.__doc__ == row["description"]
    err = idforge._errors.by_code(row["code"], "the message")
    assert type(err) is cls and str(err) == "the message"


def test_native_codes_equal_errors_json():
    assert idforge._native.error_codes() == [(r["code"], r["name"]) for r in ERRORS["errors"]]


@pytest.mark.parametrize(
    "call, cls, words",
    [
        (lambda: idforge.ObjectId("zz"), idforge.InvalidHexError, "hex"),
        (lambda: idforge.Flake128.from_base62("!"), idforge.InvalidBase62Error, "base62"),
        (lambda: idforge.ObjectId(b"short"), idforge.InvalidLengthError, "length"),
        (lambda: idforge.Snowflake("twitter", node_id=1024), idforge.NodeOutOfRangeError, "node"),
        (lambda: idforge.Snowflake("nope"), idforge.InvalidLayoutError, "preset"),
        (lambda: idforge.Layout(0, 0, 41, 10, 12), idforge.InvalidLayoutError, "tick_ms"),
        (lambda: idforge.Snowflake(policy="sometimes"), idforge.InvalidArgumentError, "policy"),
        (lambda: idforge.Snowflake(max_wait=1e20), idforge.InvalidArgumentError, "max_wait"),
        (lambda: idforge.Snowflake().next_many(2**27 + 1), idforge.InvalidArgumentError, "2^27"),
        (lambda: idforge.Segments("memory:", "t").next_many(2**27 + 1), idforge.InvalidArgumentError, "2^27"),
        (lambda: idforge.Segments("bogus://x", "t"), idforge.InvalidUrlError, ""),
        (lambda: idforge.Segments("memory:", "../x"), idforge.InvalidArgumentError, ""),
        (lambda: idforge.Layout.preset("twitter").bounds_at(0), idforge.TimeOutOfRangeError, ""),
        (lambda: idforge.Layout.preset("twitter").compose(0, 0, 4096), idforge.SequenceOutOfRangeError, ""),
    ],
)
def test_native_errors_raise_the_class(call, cls, words):
    with pytest.raises(cls) as info:
        call()
    assert isinstance(info.value, idforge.IdforgeError)
    assert words.lower() in str(info.value).lower()
    assert info.value.code == cls.code
    assert info.value.status == cls.code


def test_value_errors_are_value_errors():
    with pytest.raises(ValueError):
        idforge.ObjectId("not hex")
