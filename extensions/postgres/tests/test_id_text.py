"""idforge_id_to_text() and idforge_id_from_text() on the shared vectors (core/testdata/id_text.json),
against the cluster of ci/steps/pg-extension.sh. Runs after test_extension.py (file order), which
leaves the extension created."""

import json
from pathlib import Path

import pytest

from pgext import SqlError, one, signed, sql

ROOT = Path(__file__).resolve().parents[3]
VECTORS = json.loads((ROOT / "core/testdata/id_text.json").read_text())
FORMS = ("decimal", "base32", "base62")


def quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def array(ids) -> str:
    return "ARRAY[" + ",".join(str(signed(int(i))) for i in ids) + "]::bigint[]"


def test_every_vector_both_ways_in_one_query_per_form():
    rows = VECTORS["ids"]
    for form in FORMS:
        got = sql(
            f"SELECT idforge_id_to_text(v, '{form}') FROM unnest({array(r['id'] for r in rows)})"
            " WITH ORDINALITY AS t(v, i) ORDER BY i"
        )
        assert [g[0] for g in got] == [r[form] for r in rows], form
        texts = "ARRAY[" + ",".join(quote(r[form]) for r in rows) + "]"
        back = sql(
            f"SELECT idforge_id_from_text(v, '{form}') FROM unnest({texts}) WITH ORDINALITY AS t(v, i)"
            " ORDER BY i"
        )
        assert [int(b[0]) for b in back] == [signed(int(r["id"])) for r in rows], form
    # base32 is the default form.
    assert one("SELECT idforge_id_to_text(7301234567890123456)") == "6AMSJ4ZME9EP0"
    assert one("SELECT idforge_id_from_text('6amsj4zme9ep0')") == "7301234567890123456"
    for row in VECTORS["parse"]:
        got = one(f"SELECT idforge_id_from_text({quote(row['text'])}, '{row['form']}')")
        assert int(got) == signed(int(row["id"]))


@pytest.mark.parametrize("row", VECTORS["errors"], ids=lambda r: f"{r['form']}:{r['text']!r}")
def test_refused_texts_are_the_vectors_errors(row):
    with pytest.raises(SqlError) as e:
        sql(f"SELECT idforge_id_from_text({quote(row['text'])}, '{row['form']}')")
    assert e.value.message.startswith(row["error"] + ":"), e.value


@pytest.mark.parametrize("row", VECTORS["describe_errors"], ids=lambda r: f"{r['kind']}:{r['text']!r}")
def test_describe_refuses_a_second_text_of_an_id(row):
    # A snowflake's one text, detected or named: '007' is not 7 in SQL either.
    kind = "NULL" if row["kind"] == "any" else f"'{row['kind']}'"
    with pytest.raises(SqlError) as e:
        sql(f"SELECT idforge_describe({quote(row['text'])}, {kind})")
    assert e.value.message.startswith(row["error"] + ":"), e.value


def test_bad_forms_and_null():
    for query in ("SELECT idforge_id_to_text(1, 'hex')", "SELECT idforge_id_from_text('1', 'base64')"):
        with pytest.raises(SqlError) as e:
            sql(query)
        assert e.value.message.startswith("INVALID_ARGUMENT:"), e.value
    assert sql("SELECT idforge_id_to_text(NULL) IS NULL") == [["t"]]
    # A column of ids sorted by their base32 text is sorted by id (COLLATE "C": byte order).
    rows = sql(
        "SELECT id FROM (SELECT idforge_snowflake() AS id FROM generate_series(1, 2000)) s"
        " ORDER BY idforge_id_to_text(id) COLLATE \"C\""
    )
    ids = [int(r[0]) for r in rows]
    assert ids == sorted(ids) and len(set(ids)) == 2000
