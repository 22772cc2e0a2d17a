"""Receipt checks: what engram's own code guarantees about every receipt.

Each rule below restates a guarantee of engram's ``knowledgeRetrieval.ts``
(``emptyReceipt``, ``filterCandidates``, ``retrieveRecords``,
``retrieveEnumeratedRecords``, ``withheldReceipt``). A receipt engram wrote
passes them all; a finding means the log was edited, damaged, or written by
other code.

Why each holds, in engram's terms:

- A receipt starts as ``emptyReceipt`` (ids, locators, exposed results empty,
  ``kind: "miss"``, threshold null, ``withheld: {audienceId: null, count: 0}``).
  Guarded retrieval copies the filter's classes, threshold and (string)
  audience into it; enumeration does the same but forces ``query`` and the
  threshold to null. A failure returns that receipt, at most with a count.
- Only ``filterCandidates`` fills ``locatorUris``/``recordIds``, one of each per
  record, after ``safeRelativeMarkdownPath`` accepted the locator for the
  active collection (for an enumeration, one built from a file name directly
  in the records root), after ``seenPaths`` skipped a repeat, and after the record
  read there proved to carry ``id == basename(relativePath, ".md")``.
- Under a filter, every record kept is first pushed to ``exposedResults``, so
  exposed results match records one for one and in order; without a filter
  (no audience) nothing is exposed and nothing is withheld. An exposed result
  passed the class test (non-empty, every class allowed and requested), the
  presentation exclusion, and for a search the threshold (``score`` present
  and not below it); an enumerated candidate never carries a score.
- ``kind`` becomes ``"hit"`` exactly when a record was kept; the outcome is
  ``hit`` with the records, ``miss`` with none, or a failure whose receipt is
  still ``kind: "miss"`` and which carries errors instead of records.
- A receipt embedded in a presentation (``shape`` "presentation") comes from
  ``renderPresentation``: ``presented`` only after a hit, ``failed`` with the
  retrieval's own receipt (a miss) or after a hit, when a later step failed.
  Such a row returns no records (``n_records`` is <NA>).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._core import engine
from .._core.describe import quote
from .._core.findings import FINDING_COLUMNS, FindingsBuilder, Rule, RuleTable
from .._core.lists import list_column, list_lengths, pair_keys, starts_of
from ..errors import AuditError
from ._exposed_checks import exposed_findings
from .loader import NAME
from .locators import locator_safety

__all__ = ["FINDING_COLUMNS", "RECEIPT_RULES", "RULES", "check_receipts"]

_RULE_TEXT = (
    # name, field at fault, what engram guarantees
    ("space_query", "query", "A space receipt has a null query: enumeration runs no query."),
    (
        "space_threshold",
        "relevance_threshold",
        "A space receipt has a null relevance threshold: enumeration never ranks.",
    ),
    (
        "unresolved_space_collection",
        "collection",
        "A receipt whose space never resolved (null active_space) has an empty collection.",
    ),
    ("kind_record_ids", "kind", "kind is 'hit' exactly when record_ids is non-empty."),
    (
        "kind_outcome",
        "kind",
        "An outcome 'hit' carries kind 'hit'; 'miss' and 'failed' carry kind 'miss'. A "
        "presentation 'presented' carries kind 'hit'; a presentation 'failed' either (a step "
        "after a hit may fail).",
    ),
    (
        "outcome_records",
        "n_records",
        "The number of records returned equals the number of record_ids.",
    ),
    (
        "outcome_errors",
        "error_codes",
        "A 'failed' outcome carries errors; 'hit', 'miss' and 'presented' carry none.",
    ),
    ("locator_count", "locator_uris", "There is one locator per record id."),
    (
        "locator_foreign",
        "locator_uris",
        "Every locator names the receipt's collection (qmd://<collection>/...), as "
        "safeRelativeMarkdownPath requires.",
    ),
    (
        "locator_unsafe",
        "locator_uris",
        "Every locator's path passes safeRelativeMarkdownPath (locator_invalid / locator_escape).",
    ),
    ("locator_duplicate", "locator_uris", "No locator appears twice in one receipt."),
    (
        "space_locator_nested",
        "locator_uris",
        "A space receipt's locators name files directly in the collection root: enumeration "
        "lists that one folder.",
    ),
    (
        "record_id_locator",
        "record_ids",
        "Each record id is the name its locator requires: basename(relativePath, '.md').",
    ),
    (
        "exposed_count",
        "n_exposed",
        "A guarded receipt (non-null audience, or any exposed result) exposes exactly one "
        "result per record id.",
    ),
    (
        "exposed_not_in_records",
        "exposed.record_id",
        "Every exposed record id is among the receipt's record_ids.",
    ),
    (
        "exposed_misaligned",
        "exposed.record_id",
        "Exposed result i is record i: same record id, same locator, and the relative path "
        "safeRelativeMarkdownPath gives for it.",
    ),
    (
        "exposed_source_class",
        "exposed.source_classes",
        "An exposed result has at least one source class, and each is both allowed and requested.",
    ),
    (
        "exposed_presentation",
        "exposed.source_classes",
        "No exposed result has the source class 'presentation'.",
    ),
    (
        "exposed_below_threshold",
        "exposed.score",
        "A search result exposed under a relevance threshold has a score, not below that "
        "threshold.",
    ),
    (
        "exposed_enumerated_score",
        "exposed.score",
        "A result of a space (enumerated) receipt carries no score: enumeration never ranks.",
    ),
    (
        "withheld_count_invalid",
        "withheld_count",
        "The withheld count is a non-negative integer.",
    ),
    (
        "withheld_without_audience",
        "withheld_count",
        "Nothing is withheld from a receipt with no audience: only guarded retrieval withholds.",
    ),
)

#: Every rule :func:`check_receipts` applies. Each is an error: engram's code
#: cannot write a receipt that breaks one.
RULES = RuleTable(
    Rule(name, text, check="receipt_rules", kind=NAME, field=field)
    for name, field, text in _RULE_TEXT
)

RECEIPT_RULES = RULES.descriptions
"""Every rule :func:`check_receipts` applies: name -> what engram guarantees."""


def _eq(series: pd.Series, value: str) -> np.ndarray:
    return (series == value).to_numpy(dtype=bool, na_value=False)


def _receipt_level(receipts: pd.DataFrame, found: FindingsBuilder) -> None:
    scope_space = _eq(receipts["scope"], "space")
    query = receipts["query"]
    threshold = receipts["relevance_threshold"]
    for pos in np.flatnonzero(scope_space & query.notna().to_numpy()):
        found.add(pos, "space_query", f"scope is 'space' but query is {quote(query.iat[pos])}")
    for pos in np.flatnonzero(scope_space & threshold.notna().to_numpy()):
        found.add(
            pos,
            "space_threshold",
            f"scope is 'space' but relevance_threshold is {float(threshold.iat[pos])!r}",
        )
    collection = receipts["collection"]
    unresolved = receipts["active_space"].isna().to_numpy() & ~_eq(collection, "")
    for pos in np.flatnonzero(unresolved):
        found.add(
            pos,
            "unresolved_space_collection",
            f"active_space is null but collection is {quote(collection.iat[pos])}",
        )

    n_ids = list_lengths(list_column(receipts, "record_ids"))
    n_locators = list_lengths(list_column(receipts, "locator_uris"))
    kind = receipts["kind"]
    kind_hit = _eq(kind, "hit")
    for pos in np.flatnonzero(kind_hit != (n_ids > 0)):
        found.add(
            pos, "kind_record_ids", f"kind is {quote(kind.iat[pos])} with {n_ids[pos]} record id(s)"
        )
    if "outcome" in receipts:
        outcome = receipts["outcome"]
        has_outcome = outcome.notna().to_numpy()
        expected_hit = _eq(outcome, "hit") | _eq(outcome, "presented")
        # renderPresentation fails after a hit too (projection, adaptation,
        # word limit, retention), passing the hit's receipt: no kind follows.
        if "shape" in receipts:
            has_outcome = has_outcome & ~(
                _eq(receipts["shape"], "presentation") & _eq(outcome, "failed")
            )
        for pos in np.flatnonzero(has_outcome & (kind_hit != expected_hit)):
            found.add(
                pos,
                "kind_outcome",
                f"outcome is {quote(outcome.iat[pos])} but kind is {quote(kind.iat[pos])}",
            )
        if "n_records" in receipts:
            n_records = receipts["n_records"].to_numpy(dtype="float64", na_value=np.nan)
            bad = ~np.isnan(n_records) & (n_records != n_ids)
            for pos in np.flatnonzero(bad):
                found.add(
                    pos,
                    "outcome_records",
                    f"{int(n_records[pos])} record(s) returned but {n_ids[pos]} record id(s)",
                )
        if "error_codes" in receipts:
            n_errors = list_lengths(list_column(receipts, "error_codes"))
            failed = _eq(outcome, "failed")
            for pos in np.flatnonzero(has_outcome & (failed != (n_errors > 0))):
                found.add(
                    pos,
                    "outcome_errors",
                    f"outcome is {quote(outcome.iat[pos])} with {n_errors[pos]} error(s)",
                )
    for pos in np.flatnonzero(n_locators != n_ids):
        found.add(
            pos, "locator_count", f"{n_locators[pos]} locator(s) for {n_ids[pos]} record id(s)"
        )

    count = receipts["withheld_count"].to_numpy(dtype="float64", na_value=np.nan)
    with np.errstate(invalid="ignore"):
        invalid = np.isnan(count) | (count < 0) | (count != np.floor(count))
    for pos in np.flatnonzero(invalid):
        value = receipts["withheld_count"].iat[pos]
        found.add(pos, "withheld_count_invalid", f"withheld count is {quote(value)}")
    no_audience = receipts["withheld_audience"].isna().to_numpy()
    for pos in np.flatnonzero(no_audience & ~invalid & (count > 0)):
        found.add(
            pos,
            "withheld_without_audience",
            f"withheld count is {int(count[pos])} with a null audience",
        )


def _locator_level(receipts: pd.DataFrame, found: FindingsBuilder) -> pa.Table:
    """Locator rules; returns the per-locator verdicts for the exposed checks."""
    locators = list_column(receipts, "locator_uris")
    flat_uris = pc.list_flatten(locators)
    parents = pc.list_parent_indices(locators).to_numpy()
    collections = pa.array(receipts["collection"].to_numpy(dtype=object, na_value=None))
    safety = locator_safety(flat_uris, collections.take(pa.array(parents, pa.int64())))
    errors = safety.column("error").combine_chunks()
    uris = flat_uris
    bad = np.flatnonzero(pc.is_valid(errors).to_numpy(zero_copy_only=False))
    for j in bad:
        code = errors[int(j)].as_py()
        rule = "locator_foreign" if code == "foreign_locator" else "locator_unsafe"
        pos = int(parents[j])
        found.add(
            pos,
            rule,
            f"{code}: {quote(uris[int(j)].as_py())} in collection "
            f"{quote(receipts['collection'].iat[pos])}",
        )

    # seenPaths: a locator repeated within one receipt.
    (keys,) = pair_keys((parents, flat_uris))
    if len(keys):
        _, first = np.unique(keys, return_index=True)
        repeated = np.ones(len(keys), dtype=bool)
        repeated[first] = False
        for j in np.flatnonzero(repeated):
            found.add(
                int(parents[j]), "locator_duplicate", f"{quote(flat_uris[int(j)].as_py())} repeats"
            )

    # enumerateCandidates lists the records root itself, never a subfolder.
    relative = safety.column("relative_path").combine_chunks()
    nested = pc.fill_null(pc.match_substring(relative, "/"), False).to_numpy(zero_copy_only=False)
    if nested.any():
        in_space = _eq(receipts["scope"], "space")[parents]
        for j in np.flatnonzero(nested & in_space):
            found.add(
                int(parents[j]),
                "space_locator_nested",
                f"{quote(flat_uris[int(j)].as_py())} is in a subfolder of the collection",
            )

    # The record id at the same position must be the locator's name.
    record_ids = list_column(receipts, "record_ids")
    flat_ids = pc.list_flatten(record_ids)
    id_lengths = list_lengths(record_ids)
    within = np.arange(len(parents)) - starts_of(list_lengths(locators))[parents]
    has_id = within < id_lengths[parents]
    id_index = np.where(has_id, starts_of(id_lengths)[parents] + within, 0)
    required = safety.column("record_id").combine_chunks()
    if len(flat_ids):
        actual = flat_ids.take(pa.array(id_index))
        differs = pc.not_equal(actual, required).to_numpy(zero_copy_only=False)
        differs = np.where(pc.is_valid(required).to_numpy(zero_copy_only=False), differs, False)
        for j in np.flatnonzero(has_id & differs):
            found.add(
                int(parents[j]),
                "record_id_locator",
                f"record id {quote(actual[int(j)].as_py())} at locator "
                f"{quote(flat_uris[int(j)].as_py())}, which requires "
                f"{quote(required[int(j)].as_py())}",
            )
    return safety


def check_receipts(receipts, exposed: pd.DataFrame | None = None) -> pd.DataFrame:
    """Check every receipt against the rules engram's code guarantees.

    Parameters
    ----------
    receipts : DataFrame or Audit
        The ``receipts`` table of :func:`explicit_audit.load` (or any subset of
        its rows), or an ``Audit``, whose ``receipts`` and ``exposed`` are used.
    exposed : DataFrame, optional
        The ``exposed`` table. Without it, the rules on exposed results (all
        ``exposed_*`` rules except ``exposed_count``) are not applied. Rows
        whose receipt is not in ``receipts`` are ignored.

    Returns
    -------
    DataFrame
        The findings table of the kit (:data:`FINDING_COLUMNS`): one row per
        finding (one per offending locator or exposed result where a rule
        concerns those), ordered by receipt then rule; ``row`` is the
        receipt's index label, ``record`` a logger's ``request_id`` where the
        log has one, ``rule`` a categorical over the keys of
        :data:`RECEIPT_RULES`. Every rule is an error. Empty when every
        receipt passes.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> audit = ea.load("data/receipts/", progress=False)
    >>> findings = ea.check_receipts(audit.receipts, audit.exposed)
    >>> len(findings), findings.loc[0, "rule"] in ea.RECEIPT_RULES
    (7, True)
    """
    if exposed is None and hasattr(receipts, "receipts") and hasattr(receipts, "exposed"):
        receipts, exposed = receipts.receipts, receipts.exposed
    # A receipt's exposed results are built in the partition of the receipt.
    frames = [receipts] if exposed is None else [receipts, exposed]
    return engine.findings(receipt_findings, frames, what="check_receipts")


def receipt_findings(receipts: pd.DataFrame, exposed: pd.DataFrame | None = None) -> pd.DataFrame:
    """:func:`check_receipts` of in-memory tables (or one partition of each)."""
    if not receipts.index.is_unique:
        raise AuditError(
            "the receipts table has repeated index labels, so exposed results cannot be "
            "matched to their receipt; check each loaded table separately, or load all "
            "files in one ea.load call"
        )
    found = FindingsBuilder(
        RULES, receipts, record=receipts.get("request_id"), what="check_receipts"
    )
    _receipt_level(receipts, found)
    safety = _locator_level(receipts, found)
    exposed_findings(receipts, exposed, safety, found)
    return found.frame()
