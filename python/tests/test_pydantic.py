"""idforge.pydantic: every accepted form, the refused ones, and JSON a JavaScript reader keeps
exactly (snowflake ids as decimal text)."""

import json
import re
import uuid

import pytest
from conftest import framework

import idforge

pydantic = framework("pydantic")
from idforge.pydantic import ObjectIdStr, ShortId, SnowflakeId, Ulid, Uuid7  # noqa: E402


class Order(pydantic.BaseModel):
    id: SnowflakeId
    ref: Uuid7
    ulid: Ulid
    oid: ObjectIdStr


def valid(**over):
    d = {"id": 1, "ref": idforge.uuid7(), "ulid": idforge.ulid(), "oid": idforge.ObjectId()}
    d.update(over)
    return d


def test_every_form_in_and_the_json_safe_form_out():
    big = idforge.Snowflake("twitter", node_id=1).next()
    assert big > 2**53  # past what a JavaScript number holds exactly
    oid = idforge.ObjectId()
    ref = idforge.uuid7()
    u = idforge.ulid()
    forms = [
        Order(id=big, ref=ref, ulid=u, oid=oid),
        Order(id=str(big), ref=str(ref), ulid=u.lower(), oid=str(oid)),
        Order(id=big, ref=ref.hex, ulid=u, oid=bytes(oid)),
    ]
    for o in forms:
        assert (o.id, o.ref, o.ulid, o.oid) == (big, ref, u, oid)
        text = o.model_dump_json()
        assert json.loads(text) == {"id": str(big), "ref": str(ref), "ulid": u, "oid": str(oid)}
        assert Order.model_validate_json(text) == o
        assert o.model_dump()["id"] == big  # an int in Python mode
    assert Order.model_json_schema(mode="serialization")["properties"]["id"]["type"] == "string"


@pytest.mark.parametrize(
    "over",
    [
        {"id": -1},
        {"id": 2**64},
        {"id": "-5"},
        {"id": "0x10"},
        {"id": "1e9"},
        {"id": "1_000"},
        {"id": True},
        {"id": 1.5},
        {"id": "1" * 21},
        {"ref": uuid.uuid4()},
        {"ref": "nope"},
        {"ulid": "U" * 26},
        {"ulid": "8" + "0" * 25},
        {"oid": "zz"},
        {"oid": b"short"},
        {"oid": 12},
    ],
)
def test_wrong_forms_fail_validation(over):
    with pytest.raises(pydantic.ValidationError):
        Order(**valid(**over))


def test_the_shared_json_vectors(vectors):
    """core/testdata/json_ids.json: the JSON every binding writes for a snowflake id."""

    class Row(pydantic.BaseModel):
        id: SnowflakeId

    doc = vectors("json_ids.json")
    for case in doc["cases"]:
        assert Row(id=int(case["id"])).model_dump_json() == case["json"]
        assert Row.model_validate_json(case["json"]).id == int(case["id"])
    for text in doc["invalid"]:
        with pytest.raises(pydantic.ValidationError):
            Row(id=text)


class Link(pydantic.BaseModel):
    id: ShortId


def test_short_ids_are_base32_in_json_and_sort_like_the_ids():
    g = idforge.Snowflake("twitter", node_id=1)
    ids = [g.next() for _ in range(100)]
    texts = []
    for i in ids:
        short = idforge.id_to_text(i)
        for given in (i, short, short.lower()):
            link = Link(id=given)
            assert link.id == i and link.model_dump()["id"] == i
            text = link.model_dump_json()
            assert json.loads(text) == {"id": short}
            assert Link.model_validate_json(text) == link
        texts.append(short)
    assert sorted(texts) == texts
    schema = Link.model_json_schema(mode="serialization")["properties"]["id"]
    assert all(re.fullmatch(schema["pattern"], t) for t in texts)
    for bad in ("0" * 12, "O" * 13, "G" + "0" * 12, -1, 2**64, True, 1.5, str(ids[0])):
        with pytest.raises(pydantic.ValidationError):
            Link(id=bad)
