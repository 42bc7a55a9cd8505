"""The shared vectors of core/testdata, through the Python API."""
import pytest

import idforge
from conftest import load

SNOW = load("snowflake.json")
OID = load("objectid.json")
FLAKE = load("flake128.json")
PRESETS = {p["name"]: p for p in SNOW["presets"]}


def layout(spec):
    if isinstance(spec, str):
        return idforge.Layout.preset(spec)
    return idforge.Layout(int(spec["epoch_ms"]), int(spec["tick_ms"]), spec["time_bits"], spec["node_bits"],
                          spec["seq_bits"], spec["order"], spec["unsigned"])


def error_class(name):
    row = next(r for r in load("errors.json")["errors"] if r["name"] == name)
    return getattr(idforge, row["python"])


def test_presets():
    assert idforge.Layout.preset_names() == [p["name"] for p in SNOW["presets"]]
    for p in SNOW["presets"]:
        got = idforge.Layout.preset(p["name"])
        assert got == layout(p)
        assert (got.epoch_ms, got.tick_ms, got.order, got.unsigned) == (
            int(p["epoch_ms"]), int(p["tick_ms"]), p["order"], p["unsigned"])


@pytest.mark.parametrize("row", SNOW["preset_names"], ids=lambda r: repr(r["input"]))
def test_preset_names(row):
    if row["preset"] is None:
        with pytest.raises(idforge.InvalidLayoutError):
            idforge.Layout.preset(row["input"])
    else:
        assert idforge.Layout.preset(row["input"]) == idforge.Layout.preset(row["preset"])


def test_layouts():
    for spec in SNOW["valid_layouts"]:
        layout(spec)
    for row in SNOW["invalid_layouts"]:
        with pytest.raises(error_class(row["error"])):
            layout(row["layout"])


def test_compose_decompose():
    for r in SNOW["compose"]:
        lay = layout(r["layout"])
        assert lay.compose(int(r["tick"]), int(r["node"]), int(r["seq"])) == int(r["id"])
        assert lay.decompose(int(r["id"])) == (int(r["tick"]), int(r["time_ms"]), int(r["node"]), int(r["seq"]))
    for r in SNOW["invalid_compose"]:
        with pytest.raises(error_class(r["error"])):
            layout(r["layout"]).compose(int(r["tick"]), int(r["node"]), int(r["seq"]))
    for r in SNOW["invalid_decompose"]:
        with pytest.raises(error_class(r["error"])):
            layout(r["layout"]).decompose(int(r["id"]))


def test_bounds_at_and_check_epoch():
    for r in SNOW["bounds_at"]:
        assert layout(r["layout"]).bounds_at(int(r["time_ms"])) == (int(r["min"]), int(r["max"]))
    for r in SNOW["invalid_bounds_at"]:
        with pytest.raises(error_class(r["error"])):
            layout(r["layout"]).bounds_at(int(r["time_ms"]))
    for r in SNOW["check_epoch"]:
        if r["error"] is None:
            layout(r["layout"]).check_epoch(int(r["now_ms"]))
        else:
            with pytest.raises(error_class(r["error"])):
                layout(r["layout"]).check_epoch(int(r["now_ms"]))


def test_generator_new_errors():
    for r in SNOW["invalid_generator_new"]:
        with pytest.raises(error_class(r["error"])):
            idforge.Snowflake(layout(r["layout"]), node_id=int(r["node"]))


def test_objectid_vectors():
    for r in OID["timestamps"] + OID["legacy"]:
        oid = idforge.ObjectId(r["hex"])
        assert oid.timestamp == r["seconds"]
        assert oid.generation_time.strftime("%Y-%m-%dT%H:%M:%SZ") == r["rfc3339"]
    for r in OID["parse"]:
        assert str(idforge.ObjectId(r["input"])) == r["hex"]
    for r in OID["from_parts"]:
        assert bytes(idforge.ObjectId(r["hex"])).hex() == r["hex"]
    for r in OID["invalid_hex"]:
        with pytest.raises(error_class(r["error"])):
            idforge.ObjectId(r["input"])
    for r in OID["invalid_bytes"]:
        with pytest.raises(error_class(r["error"])):
            idforge.ObjectId(bytes.fromhex(r["bytes_hex"]))


def test_flake128_vectors():
    for r in FLAKE["parts"]:
        f = idforge.Flake128.from_parts(int(r["time_ms"]), int(r["worker"]), int(r["seq"]))
        assert int(f) == int(r["u128"])
        assert (f.hex, f.base62, bytes(f).hex()) == (r["hex"], r["base62"], r["bytes_hex"])
        assert idforge.Flake128(r["base62"]) == f == idforge.Flake128.from_hex(r["hex"]) == idforge.Flake128(int(r["u128"]))
        assert idforge.Flake128.from_uuid(f.uuid) == f
    for r in FLAKE["boundary_base62"]:
        f = idforge.Flake128.from_base62(r["input"])
        assert (f.time_ms, f.worker, f.seq, f.base62) == (int(r["time_ms"]), r["worker"], r["seq"], r["base62"])
    for r in FLAKE["invalid_base62"]:
        with pytest.raises(error_class(r["error"])):
            idforge.Flake128.from_base62(r["input"])
    for r in FLAKE["invalid_hex"]:
        with pytest.raises(error_class(r["error"])):
            idforge.Flake128.from_hex(r["input"])
    for r in FLAKE["invalid_bytes"]:
        with pytest.raises(error_class(r["error"])):
            idforge.Flake128(bytes.fromhex(r["bytes_hex"]))
    for r in FLAKE["invalid_parts"]:
        with pytest.raises(error_class(r["error"])):
            idforge.Flake128.from_parts(int(r["time_ms"]), r["worker"], r["seq"])


LAYOUT_TEXT = load("layout_text.json")


@pytest.mark.parametrize("row", LAYOUT_TEXT["valid"], ids=lambda r: r["text"])
def test_layout_text_valid(row):
    want = idforge.Layout(row["epoch_ms"], row["tick_ms"], row["time_bits"], row["node_bits"],
                          row["seq_bits"], row["order"], row["unsigned"])
    got = idforge.Layout.parse(row["text"])
    assert got == want
    assert str(got) == row["display"]
    assert idforge.Layout.parse(got.spec) == want
    # A generator takes the same text.
    assert idforge.Snowflake(row["text"]).layout == want


@pytest.mark.parametrize("row", LAYOUT_TEXT["invalid"], ids=lambda r: r["text"])
def test_layout_text_invalid(row):
    with pytest.raises(idforge.InvalidLayoutError) as e:
        idforge.Layout.parse(row["text"])
    assert str(e.value) == "invalid layout: " + row["message"]
    with pytest.raises(idforge.InvalidLayoutError):
        idforge.Snowflake(row["text"])


ID_TEXT = load("id_text.json")
FORMS = ("decimal", "base32", "base62")


@pytest.mark.parametrize("row", ID_TEXT["ids"], ids=lambda r: r["id"])
def test_id_text_forms(row):
    for form in FORMS:
        assert idforge.id_to_text(int(row["id"]), form) == row[form]
        assert idforge.id_from_text(row[form], form) == int(row["id"])
    assert idforge.id_to_text(int(row["id"])) == row["base32"]


@pytest.mark.parametrize("row", ID_TEXT["parse"], ids=lambda r: r["text"])
def test_id_text_accepted(row):
    assert idforge.id_from_text(row["text"], row["form"]) == int(row["id"])


@pytest.mark.parametrize("row", ID_TEXT["errors"], ids=lambda r: f'{r["form"]}:{r["text"]!r}')
def test_id_text_refused(row):
    with pytest.raises(error_class(row["error"])) as caught:
        idforge.id_from_text(row["text"], row["form"])
    assert caught.value.name == row["error"]


@pytest.mark.parametrize("row", ID_TEXT["describe_errors"], ids=lambda r: f'{r["kind"]}:{r["text"]!r}')
def test_describe_refuses_a_second_text_of_an_id(row):
    # A snowflake's text is the decimal form's one text: "007" is not 7 here either.
    kind = None if row["kind"] == "any" else row["kind"]
    with pytest.raises(error_class(row["error"])) as caught:
        idforge.describe_id(row["text"], kind)
    assert caught.value.name == row["error"]


def test_id_text_bad_arguments():
    for bad in (-1, 1 << 64):
        with pytest.raises(idforge.InvalidArgumentError):
            idforge.id_to_text(bad)
    with pytest.raises(idforge.InvalidArgumentError):
        idforge.id_to_text(1, "base64")
    with pytest.raises(idforge.InvalidArgumentError):
        idforge.id_from_text("1", "hex")
    with pytest.raises(TypeError):
        idforge.id_to_text(True)
    with pytest.raises(TypeError):
        idforge.id_from_text(b"1", "decimal")
    # The worst length: refused by its length, with the form's error.
    for form, error in (("decimal", idforge.InvalidDecimalError), ("base32", idforge.InvalidBase32Error),
                        ("base62", idforge.InvalidBase62Error)):
        with pytest.raises(error):
            idforge.id_from_text("1" * 10_000_000, form)
    # Base32 texts compare like their ids.
    ids = sorted(int(r["id"]) for r in ID_TEXT["ids"])
    assert sorted(idforge.id_to_text(i) for i in ids) == [idforge.id_to_text(i) for i in ids]
