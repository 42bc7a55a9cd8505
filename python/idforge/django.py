"""Django model fields for idforge's ids (``pip install idforge[django]``).

============== ======================================== ===========================================
field          column                                   Python value, default
============== ======================================== ===========================================
SnowflakeField ``bigint``                               ``int``; :func:`next_snowflake`
Uuid7Field     ``uuid`` (PostgreSQL), ``char(32)``      ``uuid.UUID``; :func:`idforge.uuid7`
UlidField      ``varchar(26)``                          canonical ULID text; :func:`idforge.ulid`
ObjectIdField  ``varchar(24)``, lowercase hex           :class:`idforge.ObjectId`; a new one
============== ======================================== ===========================================

Every column sorts in creation order. Migrations name the fields by their import path and leave
their default out (the field adds it back), so they re-import anywhere::

    from idforge.django import SnowflakeField

    class Order(models.Model):
        id = SnowflakeField(primary_key=True)

:func:`next_snowflake` needs the setting ``IDFORGE_SNOWFLAKE``, the arguments of
:class:`idforge.Snowflake`: ``{"layout": "twitter", "node_id": 7}``, or a worker-id lease,
``{"layout": "twitter", "lease": "idforge://…", "service": "orders"}``, so that every process
has its own node. There is no default node: two processes on one node would repeat ids.
"""

from __future__ import annotations

import threading
import uuid as _uuid
from typing import Any, Optional

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.db import models

from . import ObjectId, Snowflake, parse_ulid, ulid, uuid7

__all__ = ["ObjectIdField", "SnowflakeField", "UlidField", "Uuid7Field", "new_object_id", "next_snowflake"]

_lock = threading.Lock()
_generator: Optional[Snowflake] = None


def next_snowflake() -> int:
    """The next id of this process's generator, made from ``settings.IDFORGE_SNOWFLAKE`` on first
    use. After ``os.fork()`` a fixed-node generator raises ``ForkedError`` rather than share its
    node with the parent: give each worker process a lease (or its own node) instead."""
    global _generator
    if _generator is None:
        with _lock:
            if _generator is None:
                options = getattr(settings, "IDFORGE_SNOWFLAKE", None)
                if not isinstance(options, dict):
                    raise ImproperlyConfigured(
                        'SnowflakeField needs settings.IDFORGE_SNOWFLAKE, e.g. {"layout": "twitter", '
                        '"node_id": 7} (a node no other process uses) or a worker-id lease'
                    )
                _generator = Snowflake(**options)
    return _generator.next()


def new_object_id() -> ObjectId:
    """A new ObjectId (the default of :class:`ObjectIdField`)."""
    return ObjectId()


class _DefaultField:
    """Gives the field its default, and leaves that default out of migrations."""

    idforge_default: Any = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("default", type(self).idforge_default)
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]

    def deconstruct(self) -> Any:
        name, path, args, kwargs = super().deconstruct()  # type: ignore[misc]
        if kwargs.get("default") is type(self).idforge_default:
            del kwargs["default"]
        return name, path, args, kwargs


class _FixedText(_DefaultField, models.CharField):  # type: ignore[misc]
    """Text of one length (`length`), which the field sets and migrations leave out."""

    length = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["max_length"] = self.length
        super().__init__(*args, **kwargs)

    def deconstruct(self) -> Any:
        name, path, args, kwargs = super().deconstruct()
        del kwargs["max_length"]
        return name, path, args, kwargs


class SnowflakeField(_DefaultField, models.BigIntegerField):  # type: ignore[misc]
    """A snowflake id (``bigint``), made at insert time by :func:`next_snowflake`."""

    description = "A snowflake id (64-bit integer)"
    idforge_default = staticmethod(next_snowflake)


class Uuid7Field(_DefaultField, models.UUIDField):  # type: ignore[misc]
    """A UUIDv7; another version is refused by validation and at save time."""

    description = "A UUIDv7"
    idforge_default = staticmethod(uuid7)

    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)
        if isinstance(value, _uuid.UUID) and value.version != 7:
            raise ValidationError(f"{value} is a version {value.version} UUID, not a UUIDv7")
        return value


class UlidField(_FixedText):
    """A ULID as its canonical 26-character text; lookups accept either case and aliases."""

    description = "A ULID"
    idforge_default = staticmethod(ulid)
    length = 26

    def to_python(self, value: Any) -> Optional[str]:
        if value is None:
            return None
        try:
            return parse_ulid(str(value))
        except ValueError as e:
            raise ValidationError(str(e), code="invalid") from e

    def get_prep_value(self, value: Any) -> Optional[str]:
        return self.to_python(value)


class ObjectIdField(_FixedText):
    """A MongoDB ObjectId as 24 lowercase hex digits (which sort as its bytes do)."""

    description = "A MongoDB ObjectId"
    idforge_default = staticmethod(new_object_id)
    length = 24

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Optional[ObjectId]:
        return None if value is None else ObjectId(value)

    def to_python(self, value: Any) -> Optional[ObjectId]:
        if value is None or isinstance(value, ObjectId):
            return value
        try:
            return ObjectId(value)
        except ValueError as e:
            raise ValidationError(str(e), code="invalid") from e

    def get_prep_value(self, value: Any) -> Optional[str]:
        oid = self.to_python(value)
        return None if oid is None else str(oid)

    def value_to_string(self, obj: Any) -> str:
        return str(self.value_from_object(obj))
