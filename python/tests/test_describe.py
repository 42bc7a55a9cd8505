"""``idforge.describe_id``: any id's fields by the runtime's rules (what ``python -m idforge
decode`` and the binary print)."""

import pytest

import idforge


def test_each_kind_is_detected_and_its_fields_typed():
    g = idforge.Snowflake(node_id=5)
    sid = g.next()
    d = idforge.describe_id(str(sid))
    assert list(d)[:3] == ["type", "layout", "id"]
    assert d["type"] == "snowflake" and d["id"] == str(sid) and d["node"] == 5
    assert isinstance(d["time_ms"], int) and d["time_ms"] == g.decode(sid).time_ms
    oid = idforge.ObjectId()
    assert idforge.describe_id(str(oid))["timestamp"] == oid.timestamp
    v7 = idforge.uuid7()
    d = idforge.describe_id(str(v7).upper())
    assert d["type"] == "uuid7" and d["id"] == str(v7) and isinstance(d["rand_b"], str)
    assert idforge.describe_id(f"urn:uuid:{v7}")["id"] == str(v7)
    u = idforge.ulid()
    assert idforge.describe_id(u.lower())["uuid"] == str(idforge.ulid_to_uuid(u))
    f = idforge.Flake128.from_parts(1_700_000_000_123, 0xABC, 7)
    assert idforge.describe_id(f.base62)["worker"] == "000000000abc"


def test_kind_form_and_layout():
    sid = 7_301_234_567_890_123_456
    text = idforge.id_to_text(sid, "base32")
    assert idforge.describe_id(text, form="base32") == idforge.describe_id(str(sid))
    assert idforge.describe_id(str(sid), layout="discord")["layout"] == str(idforge.Layout.parse("discord"))
    assert idforge.describe_id("123", "flake128")["type"] == "flake128"
    with pytest.raises(idforge.InvalidArgumentError):
        idforge.describe_id(text, "ulid", form="base32")
    with pytest.raises(idforge.InvalidArgumentError):
        idforge.describe_id("123", "Snowflake")  # type: ignore[arg-type]


def test_bad_text_gets_its_error_and_a_huge_one_is_cut():
    with pytest.raises(idforge.InvalidArgumentError):
        idforge.describe_id("nope")
    with pytest.raises(idforge.InvalidDecimalError):
        idforge.describe_id("1" * 21)
    with pytest.raises(idforge.InvalidDecimalError):
        idforge.describe_id("1" * 10_000_000)
    with pytest.raises(idforge.InvalidArgumentError):
        idforge.describe_id("{" + "0" * 10_000_000 + "}")
    with pytest.raises(TypeError):
        idforge.describe_id(123)  # type: ignore[arg-type]
