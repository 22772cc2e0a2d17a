"""The record formats document that ships with the kit (as ``explicit_audit.docs``)."""
