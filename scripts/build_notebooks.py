"""Build the notebooks in notebooks/ from the cell sources below, and optionally run them.

    python scripts/build_notebooks.py            # write the .ipynb files, without outputs
    python scripts/build_notebooks.py --execute  # ... and run them in notebooks/, saving outputs

The cell sources live here so that a change to a notebook is a reviewable
change to this file. Each notebook answers one question: a markdown title and
a paragraph saying what it answers, a ``parameters`` cell holding ``DATA``
(papermill style), then the public API only. Cells that only show an image or
an interactive panel carry the ``nbval-ignore-output`` tag: nbval compares
the summary tables, not pictures or widgets.

An executed notebook is saved with its widget state (``metadata.widgets``,
as ``jupyter nbconvert --execute`` stores it), so a notebook opened before it
is run shows its panels' controls and last output rather than their text
form. Widget model ids are random per run; they are renamed here in a fixed
order (from each widget view, in cell order, through the models it refers
to), and models no view refers to are left out, so the same run writes the
same bytes.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
IGNORE_OUTPUT = "nbval-ignore-output"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
MODEL_REFERENCE = "IPY_MODEL_"

SETUP = """\
import warnings

import matplotlib.pyplot as plt
import pandas as pd

import explicit_audit as ea
from explicit_audit import plots, widgets
from explicit_audit.report.tables import Percentages, use_report_tables

pd.set_option("display.max_colwidth", 160)
pd.set_option("display.width", 200)
pd.set_option("display.max_rows", 60)
# Tables as a report shows them: "—" for a missing value, 12,345, rates as 12.5%.
use_report_tables()
if ENGINE == "dask":
    ea.use_scheduler(SCHEDULER)
with warnings.catch_warnings():
    # Inputs that could not be loaded are listed below, from audit.rejected.
    warnings.simplefilter("ignore", ea.RejectedRowsWarning)
    audit = ea.load(DATA, engine=ENGINE, progress=False)
if PERSIST:
    audit = audit.persist()
# .accounting(): rejected rows, sources and row counts in memory (one pass on Dask).
audit = audit.accounting()
audit.summary()"""

PARAMETERS = """\
DATA = "../data"
# "dask": tables read partition by partition when computed, for logs larger than memory.
ENGINE = "pandas"
# With ENGINE = "dask": a distributed scheduler's address, or "threads" (default), "processes".
SCHEDULER = None
# With ENGINE = "dask": keep the rows in the workers' memory after the first read, so that
# every later cell is quick; only for data that the cluster's memory holds.
PERSIST = False"""


def md(text: str):
    return new_markdown_cell(text)


def code(text: str, *tags: str):
    cell = new_code_cell(text)
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def picture(text: str):
    """A cell that only draws: nbval does not compare its image."""
    return code(text, IGNORE_OUTPUT)


def opening(title: str, paragraph: str) -> list:
    return [
        md(f"# {title}\n\n{paragraph}"),
        code(PARAMETERS, "parameters"),
        code(SETUP),
    ]


def plan_hashes() -> list:
    return [
        *opening(
            "Do the recorded plan and request hashes hold?",
            "arborist records a `retrieval_plan_hash` with every run, and explicit_learning's "
            "C2 compiler records a `request_sha256` with every compile request. This notebook "
            "rebuilds both from the records exactly as written and answers: how many recorded "
            "hashes hold; for each one that does not, which known writer or edit reproduces it "
            "(the diagnosis) or whether none does (the plan or its hash changed after hashing); "
            "whether any compile-request payload carries a key the §7.1 hiding rule forbids; "
            "and whether every model asked about one `base_id` received the same payload "
            "(independence). A plan editor at the end shows how each field moves the hash, and "
            "that a plan whose MT fields are all empty keeps its pre-MT hash.",
        ),
        md("Inputs of these two kinds that could not be loaded (file, line, reason):"),
        code(
            'rejected = audit.rejected[audit.rejected["kind"].isin(["plans", "requests"])]\n'
            'rejected[["source_file", "source_line", "kind", "reason"]]'
        ),
        md(
            "## Retrieval plans\n\n"
            "Every recorded `retrieval_plan_hash`, rebuilt with arborist's own canonical "
            "JSON (sorted keys, compact, non-ASCII escaped, MT block only when an MT field "
            "is set). Plans per verification status:"
        ),
        code(
            "checked = ea.plan_verdicts(audit.plans)\n"
            "# ea.collect: a small result in memory, on either engine (here, the counts).\n"
            'ea.collect(checked["status"].value_counts(sort=False)).rename("plans").to_frame()'
        ),
        picture(
            "fig, ax = plt.subplots(figsize=(7, 2.8))\n"
            "plots.plot_hash_verification(checked, ax=ax)\n"
            "plt.show()"
        ),
        md("The mismatches, with the variant that reproduces each recorded hash:"),
        code(
            'mismatches = ea.collect(checked[~checked["match"]])\n'
            'mismatches[["run_id", "source_file", "source_line", "status", "variant", '
            '"diagnosis"]]'
        ),
        code(
            'mismatches.groupby(["status", "variant"], observed=True, dropna=False)'
            '.size().rename("plans").to_frame()'
        ),
        md(
            "## Compile requests\n\n"
            "`request_sha256` rebuilt in the default dialect (Python `json.dumps`, sorted "
            "keys, compact, non-ASCII raw); a mismatch is tested against every other known "
            "dialect. Findings per rule and severity:"
        ),
        code(
            "findings = ea.check_requests(audit.requests)\n"
            'findings.groupby(["rule", "severity"], observed=True).size()'
            '.rename("findings").to_frame()'
        ),
        picture(
            "fig, ax = plt.subplots(figsize=(7, 2.8))\n"
            'plots.plot_finding_counts(findings, title="Compile-request findings")\n'
            "plt.show()"
        ),
        md("### Hash mismatches, and the dialect that explains each, if any"),
        code(
            'columns = ["record", "source_file", "source_line", "rule", "severity", "detail"]\n'
            'hashes = findings["check"] == "request_hashes"\n'
            "findings.loc[hashes, columns]"
        ),
        md(
            "### The hiding rule (§7.1)\n\nA payload never carries a forbidden key at its top "
            "level (`forbidden_key`, an error); the same names nested deeper, which the "
            "producer's builder allows, are reported as a notice (`forbidden_key_nested`)."
        ),
        code(
            'hiding = findings["check"] == "request_hiding_rule"\n'
            'findings.loc[hiding, ["record", "source_line", "rule", "severity", "field", '
            '"detail"]]'
        ),
        md(
            "### Independence\n\nEvery model asked about one `base_id` must compile from the "
            "same payload; a breach is reported on every request of the `base_id`."
        ),
        code(
            'independence = findings["rule"] == "independence"\n'
            'findings.loc[independence, ["record", "source_line", "detail"]]'
        ),
        md(
            "## Plan editor\n\n"
            "The view behind the editor, rendered for the first recorded plan: the canonical "
            "JSON arborist hashes, its hash, and the hash of the same plan with every MT field "
            "empty (the pre-MT hash)."
        ),
        code(
            'plans_recorded = audit.rows("plans") > 0\n'
            "if plans_recorded:\n"
            '    first_plan = ea.collect(audit.plans["plan"], head=1).iloc[0]\n'
            "    display(widgets.plan_view(first_plan))\n"
            "else:\n"
            '    print(f"No retrieval plan in {DATA}: the editor has no recorded plan to start '
            'from.")'
        ),
        md(
            "Setting an MT field adds the `mt` block and changes the hash; setting every MT "
            "field to the empty string leaves the block out, so the hash is the pre-MT hash. "
            "One non-ASCII keyword is written `\\uXXXX`-escaped, as Python's `json.dumps` "
            "does by default:"
        ),
        code(
            "if plans_recorded:\n"
            "    edits = {\n"
            '        "as recorded": {},\n'
            '        "MT engine set": {"mt_engine": "nllb-200", "source_lang": "ko"},\n'
            '        "MT fields empty": {"mt_engine": "", "mt_manifest_hash": "", '
            '"source_lang": ""},\n'
            '        "top_k + 1": {"top_k": widgets.plan_view(first_plan).fields["top_k"] + 1},\n'
            '        "Korean keywords": {"retrieval_keywords": "서울 예산"},\n'
            "    }\n"
            "    previews = {name: widgets.plan_view(first_plan, **change) "
            "for name, change in edits.items()}\n"
            "    display(pd.DataFrame(\n"
            "        {\n"
            '            "retrieval_plan_hash": [p.plan_hash for p in previews.values()],\n'
            '            "mt_block": [p.mt_block for p in previews.values()],\n'
            '            "equals_pre_mt_hash": [\n'
            "                p.hash_unchanged_by_mt for p in previews.values()\n"
            "            ],\n"
            "        },\n"
            '        index=pd.Index(list(previews), name="edit"),\n'
            "    ))"
        ),
        code('if plans_recorded:\n    display(previews["Korean keywords"])'),
        md(
            "The editor reads what is typed as the seed's `canonical()` reads it: `int()` on "
            "the counts (so an emptied `top_k` is refused, not kept at its old value, and "
            '`" 8 "` is hashed as 8), strings as written (so an MT field holding one space '
            "counts as set and moves the hash). What the seed would refuse is an error and no "
            "hash is shown; what it accepts but is likely a slip is a warning:"
        ),
        code(
            "slips = {\n"
            '    "top_k emptied": {"top_k": ""},\n'
            '    "top_k = -3": {"top_k": "-3"},\n'
            '    "top_k typed \' 8 \'": {"top_k": " 8 "},\n'
            '    "MT manifest hash = \' \'": {"mt_manifest_hash": " "},\n'
            "}\n"
            "if plans_recorded:\n"
            "    checked_edits = {name: widgets.plan_edit_view(first_plan, **change)\n"
            "                     for name, change in slips.items()}\n"
            "    display(pd.DataFrame(\n"
            "        [(name, m.field, m.level, m.text) for name, edit in checked_edits.items()\n"
            '         for m in edit.messages if m.field != "shard_ids"],\n'
            '        columns=["edit", "field", "level", "message"],\n'
            '    ).set_index(["edit", "field"]))\n'
            "else:\n"
            '    print("No retrieval plan to edit.")'
        ),
        md(
            "The interactive editor (change keywords, `top_k`, shards or the MT fields and "
            "watch the checks, the canonical JSON and the hash; whitespace is shown as "
            "Python writes it, `' '`):"
        ),
        code("widgets.plan_panel(first_plan) if plans_recorded else None", IGNORE_OUTPUT),
    ]


def withheld_counts() -> list:
    return [
        *opening(
            "What did authorization withhold, from whom, where?",
            "An engram retrieval receipt carries `withheld: {audienceId, count}`: how many "
            "records authorization withheld from one retrieval, never which. This notebook "
            "answers how many receipts withheld anything and how many records were withheld, "
            "per audience, per space and per scope (a search or an enumeration of a space); "
            "whether any receipt breaks what engram's own code guarantees (the receipt "
            "checks); what each rendered view withheld, per view and audience (engram's "
            "presentations, with their own checks); and how much each audience could learn "
            "from the counts alone, the "
            "count as a weak oracle. An explorer at the end picks one audience, one space "
            "and, where the log carries timestamps, a time window.",
        ),
        md("Receipts that could not be loaded (file, line, reason):"),
        code(
            'rejected = audit.rejected[audit.rejected["source_file"].str.contains("receipts")]\n'
            'rejected[["source_file", "source_line", "kind", "reason"]]'
        ),
        md(
            "## Withheld counts\n\nPer audience (a missing audience is unguarded retrieval, "
            "which never withholds), with an overall row:"
        ),
        code(
            "def labelled(table):\n"
            '    """Name the missing group: no audience, or a space that never resolved."""\n'
            '    return table.rename(index=lambda label: "(none)" if pd.isna(label) else label)\n'
            "\n"
            "\n"
            "receipts = audit.receipts\n"
            'by_audience = ea.withheld_summary(receipts, by="withheld_audience", overall=True)\n'
            "labelled(by_audience).round(3)"
        ),
        picture(
            "fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3))\n"
            'plots.plot_withheld_by(by_audience, column="records_withheld", ax=left)\n'
            'plots.plot_withheld_by(by_audience, column="withheld_share", ax=right)\n'
            "fig.tight_layout()\n"
            "plt.show()"
        ),
        md("Per space:"),
        code(
            'by_space = ea.withheld_summary(receipts, by="active_space", overall=True)\n'
            "labelled(by_space).round(3)"
        ),
        md("Per scope (`search`: a query ran; `space`: the records root was enumerated):"),
        code(
            'by_scope = ea.withheld_summary(receipts, by="scope", overall=True)\nby_scope.round(3)'
        ),
        picture(
            "fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3))\n"
            'plots.plot_withheld_by(by_space, column="records_withheld", ax=left)\n'
            'plots.plot_withheld_by(by_scope, column="withheld_rate", ax=right)\n'
            "fig.tight_layout()\n"
            "plt.show()"
        ),
        md(
            "## Rendered views\n\nengram's presentation rendering embeds the retrieval "
            "receipt of every view it renders (`audit.presentations`, one row per rendering, "
            "`receipt_row` naming its receipt). Renderings per status, and the error codes "
            "of those that failed (before retrieval, at retrieval, or after a hit):"
        ),
        code(
            "presentations = audit.presentations\n"
            'views_rendered = audit.rows("presentations") > 0\n'
            "if not views_rendered:\n"
            '    print(f"No rendered view in {DATA}: no presentation log among the inputs.")\n'
            "else:\n"
            '    print(ea.collect(presentations["status"].value_counts(sort=False)).to_dict())\n'
            '    failed = presentations[presentations["status"] == "failed"]\n'
            '    codes = ea.collect(failed["error_codes"].explode().value_counts(sort=False))\n'
            "    # the most frequent first; equal counts in the codes' order\n"
            '    codes = codes.sort_index().sort_values(ascending=False, kind="stable")\n'
            '    display(codes.rename("renderings").to_frame())'
        ),
        md(
            "Withheld counts per rendered view and the audience it was rendered for "
            "(presented views; a count is what that audience's retrieval withheld):"
        ),
        code(
            "# The receipt of each presented view, with its view_id and audience_id.\n"
            "view_receipts = ea.view_receipts(audit)\n"
            "if views_rendered:\n"
            "    by_view = ea.withheld_summary(\n"
            '        view_receipts, by=["view_id", "audience_id"], overall=True\n'
            "    )\n"
            "    display(by_view.round(3))"
        ),
        picture(
            "if views_rendered:\n"
            "    fig, ax = plt.subplots(figsize=(9, 3))\n"
            '    per_view = ea.withheld_summary(view_receipts, by="view_id", overall=True)\n'
            '    plots.plot_withheld_by(per_view, column="withheld_share", ax=ax)\n'
            "    plt.show()"
        ),
        md(
            "Every rendering against the guarantees of engram's presentation code "
            "(`ea.PRESENTATION_RULES`): its sources against its retrieval receipt, the "
            "audience against the withheld count's, the `presentationId` rebuilt, ..."
        ),
        code(
            "presentation_findings = ea.check_presentations(audit)\n"
            "presentation_findings[\n"
            '    ["source_file", "source_line", "row", "rule", "field", "detail"]\n'
            "]"
        ),
        md(
            "## Receipt checks\n\nEvery receipt against the guarantees of engram's own code "
            "(`ea.RECEIPT_RULES`). Findings per rule:"
        ),
        code(
            "findings = ea.check_receipts(audit)\n"
            'findings["rule"].value_counts(sort=False).loc[lambda n: n > 0]'
            '.rename("findings").to_frame()'
        ),
        code('findings[["source_file", "source_line", "rule", "detail"]]'),
        md(
            "## The count as an oracle\n\nA non-zero count tells the caller that restricted "
            "content matched the query. Per audience: distinct queries asked, those whose "
            "count was non-zero at least once (`queries_withheld`) and their share:"
        ),
        code("oracle = ea.withheld_oracle(receipts)\nlabelled(oracle).round(3)"),
        picture(
            "fig, ax = plt.subplots(figsize=(9, 3))\n"
            "plots.plot_withheld_oracle(oracle, ax=ax)\n"
            "plt.show()"
        ),
        md(
            "## Over time\n\nOnly some loggers add a `timestamp`; receipts without one are "
            "left out of every time window. Receipts with and without a timestamp, and the "
            "days the timestamps span:"
        ),
        code(
            "# count(): the timestamps present; no column when no logger added one.\n"
            'has_column = "timestamp" in receipts.columns\n'
            'dated = int(ea.collect(receipts["timestamp"].count())) if has_column else 0\n'
            "print(f\"with a timestamp: {dated}, without: {audit.rows('receipts') - dated}\")\n"
            "days = widgets.time_range(receipts) if dated else None\n"
            "if days is None:\n"
            '    print("no time window to show")\n'
            "else:\n"
            '    print(f"from {days[0]:%Y-%m-%d} to {days[-1]:%Y-%m-%d} (UTC, end exclusive)")'
        ),
        md("Withheld counts in the first two days of the log, per audience:"),
        code(
            "# The first two days, or every day when the log spans fewer.\n"
            "window = None if days is None else (days[0], days[min(2, len(days) - 1)])\n"
            "if window is None:\n"
            '    print("no receipt has a timestamp")\n'
            "else:\n"
            "    first_days = ea.within_time_window(receipts, *window)\n"
            '    early = ea.withheld_summary(first_days, by="withheld_audience", overall=True)\n'
            "    display(labelled(early).round(3))"
        ),
        md(
            "## Explorer\n\nThe explorer's view with its defaults (every audience, every "
            "space, no time window, grouped by scope):"
        ),
        code("widgets.withheld_view(audit)"),
        md("The same view for one audience in one space, over the first two days, per outcome:"),
        code(
            'widgets.withheld_view(audit, audience="peer", space="harbor-ops", by="outcome",\n'
            "                      window=window)"
        ),
        md(
            "The explorer's chart, records withheld per group of the view, for the same "
            "choice (its caption states the counts drawn):"
        ),
        picture(
            'widgets.withheld_chart(audit, audience="peer", space="harbor-ops", by="outcome",\n'
            "                       window=window)"
        ),
        md(
            "The interactive explorer. The day window's handles start at its open ends "
            "(`open (start)`, `open (end)`: every receipt, with or without a timestamp); "
            "each handle moves by mouse or by arrow keys, and the window is written out next "
            "to the slider:"
        ),
        code("widgets.withheld_panel(audit)", IGNORE_OUTPUT),
    ]


def routing_sweep() -> list:
    return [
        *opening(
            "Did routing decisions follow policy, and what would other thresholds cost?",
            "The document server decides, per request, whether the 4B model answers or the "
            "task escalates to the 26B model, from a policy's three thresholds (context cap, "
            "multi-document count, confidence), its subject domains and its risk flags. This "
            "notebook replays every recorded decision under the policy it names and answers "
            "whether each follows it (the replay and the six invariants); then, for every "
            "policy variant, how the escalation rate moves across each threshold, which "
            "reasons drive escalation, and which decisions would flip. An explorer at the end "
            "has a slider per threshold and a variant picker.",
        ),
        md("Decisions that could not be loaded, and the policy variants:"),
        code(
            'rejected = audit.rejected[audit.rejected["kind"] == "decisions"]\n'
            'rejected[["source_file", "source_line", "reason"]]'
        ),
        code('audit.policies.to_frame().drop(columns=["source_file"]).set_index("policy_id")'),
        md(
            "## Replay verification\n\nEvery recorded decision against the policy it names: "
            "the replay (field by field) and the invariants INV-1 to INV-6 "
            "(`ea.DECISION_RULES`). Findings per policy and rule:"
        ),
        code(
            "findings = ea.check_decisions(audit.decisions, audit.policies)\n"
            "# The policy each finding's decision names (ea.collect: only those rows).\n"
            'named_policy = ea.collect(audit.decisions["policy_id"], rows=findings["row"])\n'
            'findings["policy_id"] = named_policy.to_numpy()\n'
            'findings.groupby(["policy_id", "rule"], observed=True).size()'
            '.rename("findings").to_frame()'
        ),
        code('findings[["record", "policy_id", "rule", "field", "detail"]]'),
        picture(
            "fig, ax = plt.subplots(figsize=(7, 3))\n"
            'plots.plot_finding_counts(findings, title="Decision findings per rule")\n'
            "plt.show()"
        ),
        md(
            "## Escalation across each threshold\n\nEvery decision under every variant, one "
            "threshold varied at a time (the other two at the variant's own values); dots "
            "mark each variant's own threshold."
        ),
        code(
            "import numpy as np\n\n"
            "axes = {\n"
            '    "context_char_cap_4b": range(0, 20001, 500),\n'
            '    "escalate_on_multi_doc_count": range(1, 11),\n'
            '    "confidence_threshold": np.round(np.linspace(0, 1, 41), 3),\n'
            "}\n"
            'policies = audit.policies.to_frame().set_index("policy_id")\n'
            "swept = {name: ea.sweep(audit.decisions, audit.policies, {name: values})\n"
            "         for name, values in axes.items()}"
        ),
        picture(
            "# One pane per row: each keeps the page's width, so its axis text stays legible.\n"
            "fig, panes = plt.subplots(3, 1, figsize=(9, 10))\n"
            "for ax, (name, frame) in zip(panes, swept.items()):\n"
            "    plots.plot_escalation_curve(frame, threshold=name, current=policies[name], "
            'ax=ax, title="")\n'
            'fig.suptitle("Share of decisions escalated to 26B, one threshold varied at a '
            'time")\n'
            "fig.tight_layout()\n"
            "plt.show()"
        ),
        md("The escalation rate at a few points of each axis:"),
        code(
            "points = {\n"
            '    "context_char_cap_4b": [2000, 4000, 6000, 9000, 12000],\n'
            '    "escalate_on_multi_doc_count": [1, 2, 3, 5, 8],\n'
            '    "confidence_threshold": [0.3, 0.45, 0.6, 0.75, 0.9],\n'
            "}\n"
            "for name, values in points.items():\n"
            "    frame = swept[name][swept[name][name].isin(values)]\n"
            '    rates = frame.pivot(index=name, columns="policy_id", values="escalation_rate")\n'
            "    display(Percentages(rates))  # escalation rates, shown as percentages"
        ),
        md(
            "## Reason mix\n\nEach variant at its own thresholds, over every decision: how "
            "many decisions carry each escalation reason."
        ),
        code(
            "as_written = ea.sweep(audit.decisions, audit.policies, {})\n"
            'reasons = [c for c in as_written.columns if c.startswith("reason_")]\n'
            'as_written.set_index("policy_id")[["decisions", "escalations", *reasons]]'
        ),
        picture(
            "fig, ax = plt.subplots(figsize=(9, 4))\n"
            "plots.plot_reason_mix(as_written, ax=ax)\n"
            "plt.show()"
        ),
        md(
            "## Decisions that flip\n\nAgainst the recorded decisions: each variant at its "
            "own thresholds over every decision (what switching to it would change), and "
            "over only the decisions that name it (what its own log disagrees with):"
        ),
        code(
            "named = ea.sweep(audit.decisions, audit.policies, {}, only_named=True)\n"
            'flip_columns = ["decisions", "flips", "flips_to_26b", "flips_to_4b"]\n'
            "pd.concat(\n"
            '    {"every decision": as_written.set_index("policy_id")[flip_columns],\n'
            '     "decisions naming it": named.set_index("policy_id")[flip_columns]},\n'
            "    axis=1,\n"
            ")"
        ),
        md("The decisions that their own policy, replayed, decides otherwise:"),
        code("widgets.flips_view(audit, only_named=True, limit=None)"),
        md(
            "Across variants: how many decisions each pattern of escalation (per variant, at "
            "its own thresholds) covers; rows where the variants disagree are the decisions "
            "a change of policy would flip."
        ),
        code("ea.escalation_patterns(audit.decisions, audit.policies)"),
        md(
            "## Explorer\n\nThe explorer's views with their defaults (every variant at its own "
            "thresholds, over every decision):"
        ),
        code("widgets.sweep_view(audit)"),
        code("widgets.flips_view(audit, limit=5)"),
        md("The same views with the confidence threshold at 0.7 for every variant:"),
        code("widgets.sweep_view(audit, confidence_threshold=0.7)"),
        md(
            "The explorer's chart: the escalation rate across the threshold last moved, the "
            "other two held where the sliders are, with a marker where each variant stands "
            "(one `ea.sweep` over the axis). The markers at 0.7, then each variant at its own "
            "thresholds:"
        ),
        code(
            "at_07 = widgets.escalation_curve_view(audit, confidence_threshold=0.7)\n"
            "own = widgets.escalation_curve_view(audit, own_thresholds=True)\n"
            'pd.concat({"sliders at 0.7": at_07.markers, "own thresholds": own.markers}, '
            "axis=1).round(3)"
        ),
        picture("widgets.escalation_chart(audit, confidence_threshold=0.7)"),
        md(
            "The interactive explorer. It starts with each variant at its own thresholds; "
            "moving a slider applies the sliders' thresholds to every variant picked and "
            "charts that threshold, and the toggle goes back to each variant's own. Picking "
            "one variant while at its own thresholds moves the sliders to them:"
        ),
        code("widgets.sweep_panel(audit)", IGNORE_OUTPUT),
    ]


BUILDERS = {
    "plan_hashes.ipynb": plan_hashes,
    "withheld_counts.ipynb": withheld_counts,
    "routing_sweep.ipynb": routing_sweep,
}


#: The tables each notebook reads: alternatives, each the tables needed together.
#: A report of data that meets none says so instead of running the notebook
#: (explicit_audit.report._empty).
TABLES = {
    "plan_hashes.ipynb": [["plans"], ["requests"]],
    "withheld_counts.ipynb": [["receipts"]],
    "routing_sweep.ipynb": [["decisions", "policies"]],
}


def build(name: str) -> nbformat.NotebookNode:
    notebook = new_notebook(cells=BUILDERS[name]())
    notebook.metadata["explicit_audit"] = {"tables": TABLES[name]}
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    notebook.metadata["language_info"] = {"name": "python"}
    for index, cell in enumerate(notebook.cells):
        cell.id = f"{Path(name).stem.replace('_', '-')}-{index:02d}"
    return notebook


def execute(notebook: nbformat.NotebookNode) -> float:
    from nbclient import NotebookClient

    client = NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
        record_timing=False,
        store_widget_state=True,
    )
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


def _references(value: Any) -> list[str]:
    """The model ids a widget state refers to, in the order its (sorted) keys hold them."""
    if isinstance(value, str):
        return [value[len(MODEL_REFERENCE) :]] if value.startswith(MODEL_REFERENCE) else []
    if isinstance(value, dict):
        return [ref for key in sorted(value) for ref in _references(value[key])]
    if isinstance(value, list):
        return [ref for item in value for ref in _references(item)]
    return []


def _renamed(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        if value.startswith(MODEL_REFERENCE) and value[len(MODEL_REFERENCE) :] in names:
            return MODEL_REFERENCE + names[value[len(MODEL_REFERENCE) :]]
        return value
    if isinstance(value, dict):
        return {
            key: names.get(item, item)
            if key == "model_id" and isinstance(item, str)
            else _renamed(item, names)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_renamed(item, names) for item in value]
    return value


def stable_widget_state(notebook: nbformat.NotebookNode, name: str) -> int:
    """Rename the widget models in a fixed order and drop those no view shows.

    Returns
    -------
    int
        The number of widget models kept.
    """
    stored = notebook.metadata.get("widgets", {}).get(WIDGET_STATE)
    if not stored:
        return 0
    state = stored["state"]
    order: list[str] = []

    def visit(model_id: str) -> None:
        if model_id in state and model_id not in order:
            order.append(model_id)
            for reference in _references(state[model_id]["state"]):
                visit(reference)

    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view:
                visit(view["model_id"])
    stem = Path(name).stem
    names = {
        model_id: uuid.uuid5(uuid.NAMESPACE_URL, f"explicit_audit/{stem}/{index}").hex
        for index, model_id in enumerate(order)
    }
    stored["state"] = {names[m]: _renamed(state[m], names) for m in order}
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view and view["model_id"] in names:
                view["model_id"] = names[view["model_id"]]
    return len(order)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=list(BUILDERS), help="notebooks to build")
    parser.add_argument("--execute", action="store_true", help="run them and save outputs")
    args = parser.parse_args(argv)
    NOTEBOOKS.mkdir(exist_ok=True)
    for name in args.names:
        notebook = build(name)
        if args.execute:
            seconds = execute(notebook)
            kept = stable_widget_state(notebook, name)
            print(f"{name}: executed in {seconds:.1f} s, {kept} widget models saved")
        nbformat.validate(notebook)
        nbformat.write(notebook, NOTEBOOKS / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
