"""Run by tests/test_django.py in a folder of its own (Django's settings are once per process):

  python check.py sqlite|postgres [POSTGRES_URL]

makemigrations and migrate on a fresh database, the migration re-imported, 10,000 Orders from
8 threads, read back and checked (unique, in each thread's creation order, ORDER BY as Python
sorts, lookups in other forms), every row through Django's JSON serializer and back, and the
catalog's column types. Prints a JSON summary; raises on any difference.
"""

import importlib
import json
import os
import sys
import threading
import urllib.parse

import django
from django.conf import settings

WORKERS, ROWS, BATCH = 8, 1250, 250
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)

kind = sys.argv[1]
if kind == "sqlite":
    db = {"ENGINE": "django.db.backends.sqlite3", "NAME": os.path.join(here, "db.sqlite3"),
          "OPTIONS": {"timeout": 60}}
else:
    u = urllib.parse.urlparse(sys.argv[2])
    db = {"ENGINE": "django.db.backends.postgresql", "NAME": u.path.lstrip("/"), "USER": u.username or "",
          "PASSWORD": u.password or "", "HOST": u.hostname, "PORT": str(u.port or 5432)}
settings.configure(
    INSTALLED_APPS=["fwapp"],
    DATABASES={"default": db},
    USE_TZ=True,
    DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
    IDFORGE_SNOWFLAKE={"layout": "twitter", "node_id": 5},
)
django.setup()

from django.core import serializers  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

import idforge  # noqa: E402
from creation_order import in_creation_order  # noqa: E402  (copied here by tests/test_django.py)
from fwapp.models import Order  # noqa: E402

call_command("makemigrations", "fwapp", verbosity=0)
migration = importlib.import_module("fwapp.migrations.0001_initial")
fields = dict(migration.Migration.operations[0].fields)
assert type(fields["id"]).__module__ == "idforge.django", fields
assert fields["id"].deconstruct()[1] == "idforge.django.SnowflakeField", fields["id"].deconstruct()
source = open(migration.__file__).read()
assert "idforge.django.SnowflakeField(primary_key=True" in source, source
call_command("migrate", verbosity=0)

errors = []


def work(worker):
    try:
        for start in range(0, ROWS, BATCH):
            Order.objects.bulk_create(Order(worker=worker, seq=n) for n in range(start, start + BATCH))
    except Exception as e:  # reported below
        errors.append((worker, repr(e)))
    finally:
        connection.close()


threads = [threading.Thread(target=work, args=(w,)) for w in range(WORKERS)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert errors == [], errors

rows = list(Order.objects.all())
assert len(rows) == WORKERS * ROWS, len(rows)
for column in ("id", "ref", "ulid", "oid"):
    values = [getattr(r, column) for r in rows]
    assert len(set(values)) == len(rows), f"{column}: duplicates"
    for w in range(WORKERS):
        got = [getattr(r, column) for r in sorted((r for r in rows if r.worker == w), key=lambda r: r.seq)]
        assert in_creation_order(column, got), f"{column}: worker {w} out of creation order"
    ordered = list(Order.objects.order_by(column).values_list(column, flat=True))
    assert ordered == sorted(values), f"{column}: ORDER BY differs"
assert isinstance(rows[0].oid, idforge.ObjectId), type(rows[0].oid)

# Lookups in the forms a request carries.
r = rows[123]
assert Order.objects.get(ulid=r.ulid.lower()).pk == r.pk
assert Order.objects.get(oid=str(r.oid)).pk == r.pk
assert Order.objects.get(pk=str(r.pk)).pk == r.pk
assert Order.objects.filter(pk__gt=r.pk).count() == sum(1 for x in rows if x.pk > r.pk)

# Django's JSON, both ways.
text = serializers.serialize("json", rows)
back = [o.object for o in serializers.deserialize("json", text)]
assert [(o.pk, o.ref, o.ulid, o.oid) for o in back] == [(o.pk, o.ref, o.ulid, o.oid) for o in rows]

table = Order._meta.db_table
with connection.cursor() as c:
    if kind == "sqlite":
        c.execute(f"PRAGMA table_info({table})")
        types = {row[1]: row[2].lower() for row in c.fetchall()}
    else:
        c.execute("SELECT column_name, data_type, character_maximum_length FROM information_schema.columns "
                  "WHERE table_name = %s", [table])
        types = {name: f"{t}({n})" if n else t for name, t, n in c.fetchall()}
print(json.dumps({"rows": len(rows), "types": {k: types[k] for k in ("id", "ref", "ulid", "oid")}}))
