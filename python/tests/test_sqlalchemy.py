"""idforge.sqlalchemy on real databases: SQLite in a temp dir and the test PostgreSQL
(ci/services.sh). A model keyed by a snowflake, with a UUIDv7, a ULID and an ObjectId beside it,
gets 10,000 rows from 8 threads; they are read back, each column unique and sorted in each
thread's creation order (also by the database's ORDER BY), every row round-trips through the
Pydantic types' JSON, and the catalog shows the documented column types."""

import threading
import uuid

import pytest
from conftest import framework, postgres_url
from creation_order import in_creation_order

import idforge

sa = framework("sqlalchemy")
framework("pydantic")
from sqlalchemy import orm  # noqa: E402

from idforge.sqlalchemy import ObjectIdType, SnowflakeId, Ulid, Uuid7  # noqa: E402

WORKERS, ROWS, BATCH = 8, 1250, 250

# The column types each database should show (its catalog's words).
CATALOG = {
    "sqlite": {"id": "BIGINT", "ref": "CHAR(32)", "ulid": "VARCHAR(26)", "oid": "BLOB"},
    "postgresql": {"id": "bigint", "ref": "uuid", "ulid": "character varying(26)", "oid": "bytea"},
}


def model(table):
    class Base(orm.DeclarativeBase):
        pass

    ids = idforge.Snowflake("twitter", node_id=1)

    class Row(Base):
        __tablename__ = table
        id = orm.mapped_column(SnowflakeId, primary_key=True, default=ids.next)
        ref = orm.mapped_column(Uuid7, default=idforge.uuid7, nullable=False)
        ulid = orm.mapped_column(Ulid, default=idforge.ulid, nullable=False)
        oid = orm.mapped_column(ObjectIdType, default=idforge.ObjectId, nullable=False)
        worker = orm.mapped_column(sa.Integer, nullable=False)
        seq = orm.mapped_column(sa.Integer, nullable=False)

    return Base, Row


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path):
    if request.param == "sqlite":
        # Writers wait for each other's locks (SQLite has one writer at a time).
        e = sa.create_engine(f"sqlite:///{tmp_path}/orm.db", connect_args={"timeout": 60})
    else:
        framework("psycopg")
        url = postgres_url().replace("postgres://", "postgresql+psycopg://", 1)
        e = sa.create_engine(url, pool_size=WORKERS)
    yield e
    e.dispose()


def column_types(engine, table):
    with engine.connect() as c:
        if engine.dialect.name == "sqlite":
            return {r[1]: r[2] for r in c.exec_driver_sql(f"PRAGMA table_info({table})")}
        rows = c.execute(
            sa.text(
                "SELECT column_name, data_type, character_maximum_length FROM information_schema.columns "
                "WHERE table_name = :t"
            ),
            {"t": table},
        )
        return {name: f"{kind}({n})" if n else kind for name, kind, n in rows}


def test_a_model_keyed_by_idforge_ids_from_8_threads(engine):
    from idforge.pydantic import ObjectIdStr, SnowflakeId as SnowflakeJson, Ulid as UlidJson, Uuid7 as Uuid7Json
    from pydantic import BaseModel, ConfigDict

    table = f"fw_orders_{uuid.uuid4().hex[:8]}"
    Base, Row = model(table)
    Base.metadata.create_all(engine)
    try:
        errors = []

        def work(worker):
            try:
                with orm.Session(engine) as s:
                    for start in range(0, ROWS, BATCH):
                        s.add_all(Row(worker=worker, seq=n) for n in range(start, start + BATCH))
                        s.commit()
            except Exception as e:  # reported below, with the thread's number
                errors.append((worker, e))

        threads = [threading.Thread(target=work, args=(w,)) for w in range(WORKERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []

        with orm.Session(engine) as s:
            rows = s.scalars(sa.select(Row)).all()
            assert len(rows) == WORKERS * ROWS
            for column in ("id", "ref", "ulid", "oid"):
                values = [getattr(r, column) for r in rows]
                assert len(set(values)) == len(rows), f"{column}: duplicates"
                # Each thread made its rows in seq order: every kind of id follows it.
                for w in range(WORKERS):
                    mine = sorted((r for r in rows if r.worker == w), key=lambda r: r.seq)
                    got = [getattr(r, column) for r in mine]
                    assert in_creation_order(column, got), f"{column}: worker {w}'s ids out of creation order"
                # The database orders them as Python does (bytes, UUIDs, text, integers).
                ordered = s.scalars(sa.select(getattr(Row, column)).order_by(getattr(Row, column))).all()
                assert list(ordered) == sorted(values), f"{column}: ORDER BY differs"
            assert isinstance(rows[0].id, int) and isinstance(rows[0].ref, uuid.UUID)
            assert isinstance(rows[0].oid, idforge.ObjectId) and len(rows[0].ulid) == 26

            class RowJson(BaseModel):
                model_config = ConfigDict(from_attributes=True)
                id: SnowflakeJson
                ref: Uuid7Json
                ulid: UlidJson
                oid: ObjectIdStr

            for r in rows:
                text = RowJson.model_validate(r).model_dump_json()
                back = RowJson.model_validate_json(text)
                assert (back.id, back.ref, back.ulid, back.oid) == (r.id, r.ref, r.ulid, r.oid)
                assert f'"id":"{r.id}"' in text  # a string: JavaScript keeps every digit

        assert {k: v for k, v in column_types(engine, table).items() if k in CATALOG["sqlite"]} == CATALOG[
            engine.dialect.name
        ]
    finally:
        Base.metadata.drop_all(engine)


def test_wrong_values_are_refused_before_the_database(engine):
    table = f"fw_bad_{uuid.uuid4().hex[:8]}"
    Base, Row = model(table)
    Base.metadata.create_all(engine)
    try:
        for bad in (
            {"id": 1 << 63},  # past BIGINT (an unsigned layout's id)
            {"ref": uuid.uuid4()},  # not a UUIDv7
            {"ulid": "8" + "0" * 25},  # past a ULID's 128 bits
            {"oid": "not hex"},
        ):
            with orm.Session(engine) as s:
                s.add(Row(worker=0, seq=0, **bad))
                with pytest.raises(sa.exc.StatementError) as e:
                    s.commit()
                assert isinstance(e.value.orig, ValueError), bad
        with orm.Session(engine) as s:
            assert s.scalar(sa.select(sa.func.count()).select_from(Row)) == 0
            # Aliases and lower case are stored as the canonical text.
            s.add(Row(worker=0, seq=0, ulid="01arz3ndektsv4rrffq69g5fav".replace("1", "i")))
            s.commit()
            assert s.scalar(sa.select(Row.ulid)) == "01ARZ3NDEKTSV4RRFFQ69G5FAV"
    finally:
        Base.metadata.drop_all(engine)
