"""idforge.pydantic: every accepted form, the refused ones, and JSON a JavaScript reader keeps
exactly (snowflake ids as decimal text)."""

import json
import uuid

import pytest
from conftest import framework

import idforge

pydantic = framework("pydantic")
from idforge.pydantic import ObjectIdStr, SnowflakeId, Ulid, Uuid7  # noqa: E402


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
