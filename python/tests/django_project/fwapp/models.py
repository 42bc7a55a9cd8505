"""The model of tests/test_django.py: keyed by a snowflake, with the other id fields beside it."""

from django.db import models

from idforge.django import ObjectIdField, SnowflakeField, UlidField, Uuid7Field


class Order(models.Model):
    id = SnowflakeField(primary_key=True)
    ref = Uuid7Field(unique=True)
    ulid = UlidField(unique=True)
    oid = ObjectIdField(unique=True)
    worker = models.IntegerField()
    seq = models.IntegerField()
