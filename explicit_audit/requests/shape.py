"""A C2 compile request record, declared once: ``CompileRequest.to_dict()`` and its model.

The payload is hashed exactly as written, so any key may be in it; the
hiding rule and independence are checks, not shape. These declarations give
the JSON Schema of ``explicit-audit schema requests`` and the field table of
``docs/formats.md`` section 3.
"""

from __future__ import annotations

from .._core.shape import Field, Shape

__all__ = ["SHAPES"]

#: The fields that identify one record: the C2 candidate and the model that received it.
IDENTITY = ("base_id", "model")

SHAPES = (
    Shape(
        "requests",
        "request",
        "recognised by `payload` with `request_sha256` or `base_id`",
        (
            Field("model", "string", "the model that received it", required=False,
                  nullable=True),
            Field("base_id", "string", "the C2 candidate"),
            Field("dsl", "string", "the DSL", required=False, nullable=True),
            Field("request_sha256", "string", "the canonical-JSON SHA-256 of `payload`"),
            Field("image_sha256", "string", "the untransformed image's hash", required=False,
                  nullable=True),
            Field("payload", "object", "what the model was sent, hashed as written",
                  open=True),
        ),
        record=("base_id",),
        identity=IDENTITY,
    ),
)  # fmt: skip
