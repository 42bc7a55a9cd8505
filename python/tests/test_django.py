"""idforge.django on a fresh SQLite database and the test PostgreSQL (ci/services.sh):
tests/django_project/check.py runs in a copy of the project of its own (makemigrations writes
there; Django's settings are once per process), then the column types it read from the catalog
are compared with the documented ones."""

import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from conftest import framework, postgres_url

framework("django")

PROJECT = Path(__file__).parent / "django_project"
TYPES = {
    "sqlite": {"id": "bigint", "ref": "char(32)", "ulid": "varchar(26)", "oid": "varchar(24)"},
    "postgres": {"id": "bigint", "ref": "uuid", "ulid": "character varying(26)", "oid": "character varying(24)"},
}


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_migrations_8_threads_json_and_column_types(kind, tmp_path):
    args = [kind]
    if kind == "postgres":
        framework("psycopg")
        # A database of its own: the migration creates the same table name every run.
        url = postgres_url()
        name = f"fw_django_{uuid.uuid4().hex[:8]}"
        psycopg = framework("psycopg")
        with psycopg.connect(url, autocommit=True) as c:
            c.execute(f"CREATE DATABASE {name}")
        args.append(url.rsplit("/", 1)[0] + "/" + name)
    shutil.copytree(PROJECT, tmp_path / "project", ignore=shutil.ignore_patterns("__pycache__", "migrations"))
    shutil.copy(Path(__file__).parent / "creation_order.py", tmp_path / "project")
    try:
        done = subprocess.run(
            [sys.executable, "check.py", *args], cwd=tmp_path / "project", capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr[-3000:]
        summary = json.loads(done.stdout.strip().splitlines()[-1])
        assert summary == {"rows": 10_000, "types": TYPES[kind]}
    finally:
        if kind == "postgres":
            with psycopg.connect(url, autocommit=True) as c:
                c.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_a_snowflake_field_without_its_setting_says_what_is_missing(tmp_path):
    script = (
        "import django; from django.conf import settings; settings.configure(); django.setup()\n"
        "from django.core.exceptions import ImproperlyConfigured\n"
        "from idforge.django import next_snowflake\n"
        "try:\n    next_snowflake()\nexcept ImproperlyConfigured as e:\n    print('refused:', e)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert "refused: SnowflakeField needs settings.IDFORGE_SNOWFLAKE" in done.stdout, done.stderr
