# %% [markdown]
# # What did authorization withhold, from whom, where?
#
# An engram retrieval receipt carries `withheld: {audienceId, count}`: how many records authorization withheld from one retrieval, never which. This notebook answers how many receipts withheld anything and how many records were withheld, per audience, per space and per scope (a search or an enumeration of a space); whether any receipt breaks what engram's own code guarantees (the receipt checks); what each rendered view withheld, per view and audience (engram's presentations, with their own checks); and how much each audience could learn from the counts alone, the count as a weak oracle. An explorer at the end picks one audience, one space and, where the log carries timestamps, a time window.

# %% [markdown]
# Receipts that could not be loaded (file, line, reason):

# %%
rejected = audit.rejected[audit.rejected["source_file"].str.contains("receipts")]
rejected[["source_file", "source_line", "kind", "reason"]]


# %% [markdown]
# ## Withheld counts
#
# Per audience (a missing audience is unguarded retrieval, which never withholds), with an overall row:


# %%
def labelled(table):
    """Name the missing group: no audience, or a space that never resolved."""
    return table.rename(index=lambda label: "(none)" if pd.isna(label) else label)


receipts = audit.receipts
by_audience = ea.withheld_summary(receipts, by="withheld_audience", overall=True)
labelled(by_audience).round(3)

# %% tags=["nbval-ignore-output"]
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3))
plots.plot_withheld_by(by_audience, column="records_withheld", ax=left)
plots.plot_withheld_by(by_audience, column="withheld_share", ax=right)
fig.tight_layout()
plt.show()

# %% [markdown]
# Per space:

# %%
by_space = ea.withheld_summary(receipts, by="active_space", overall=True)
labelled(by_space).round(3)

# %% [markdown]
# Per scope (`search`: a query ran; `space`: the records root was enumerated):

# %%
by_scope = ea.withheld_summary(receipts, by="scope", overall=True)
by_scope.round(3)

# %% tags=["nbval-ignore-output"]
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3))
plots.plot_withheld_by(by_space, column="records_withheld", ax=left)
plots.plot_withheld_by(by_scope, column="withheld_rate", ax=right)
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Rendered views
#
# engram's presentation rendering embeds the retrieval receipt of every view it renders (`audit.presentations`, one row per rendering, `receipt_row` naming its receipt). Renderings per status, and the error codes of those that failed (before retrieval, at retrieval, or after a hit):

# %%
presentations = audit.presentations
views_rendered = audit.rows("presentations") > 0
if not views_rendered:
    print(f"No rendered view in {DATA}: no presentation log among the inputs.")
else:
    print(ea.collect(presentations["status"].value_counts(sort=False)).to_dict())
    failed = presentations[presentations["status"] == "failed"]
    codes = ea.collect(failed["error_codes"].explode().value_counts(sort=False))
    # the most frequent first; equal counts in the codes' order
    codes = codes.sort_index().sort_values(ascending=False, kind="stable")
    display(codes.rename("renderings").to_frame())

# %% [markdown]
# Withheld counts per rendered view and the audience it was rendered for (presented views; a count is what that audience's retrieval withheld):

# %%
# The receipt of each presented view, with its view_id and audience_id.
view_receipts = ea.view_receipts(audit)
if views_rendered:
    by_view = ea.withheld_summary(view_receipts, by=["view_id", "audience_id"], overall=True)
    display(by_view.round(3))

# %% tags=["nbval-ignore-output"]
if views_rendered:
    fig, ax = plt.subplots(figsize=(9, 3))
    per_view = ea.withheld_summary(view_receipts, by="view_id", overall=True)
    plots.plot_withheld_by(per_view, column="withheld_share", ax=ax)
    plt.show()

# %% [markdown]
# Every rendering against the guarantees of engram's presentation code (`ea.PRESENTATION_RULES`): its sources against its retrieval receipt, the audience against the withheld count's, the `presentationId` rebuilt, ...

# %%
presentation_findings = ea.check_presentations(audit)
presentation_findings[["source_file", "source_line", "row", "rule", "field", "detail"]]

# %% [markdown]
# ## Receipt checks
#
# Every receipt against the guarantees of engram's own code (`ea.RECEIPT_RULES`). Findings per rule:

# %%
findings = ea.check_receipts(audit)
findings["rule"].value_counts(sort=False).loc[lambda n: n > 0].rename("findings").to_frame()

# %%
findings[["source_file", "source_line", "rule", "detail"]]

# %% [markdown]
# ## The count as an oracle
#
# A non-zero count tells the caller that restricted content matched the query. Per audience: distinct queries asked, those whose count was non-zero at least once (`queries_withheld`) and their share:

# %%
oracle = ea.withheld_oracle(receipts)
labelled(oracle).round(3)

# %% tags=["nbval-ignore-output"]
fig, ax = plt.subplots(figsize=(9, 3))
plots.plot_withheld_oracle(oracle, ax=ax)
plt.show()

# %% [markdown]
# ## Over time
#
# Only some loggers add a `timestamp`; receipts without one are left out of every time window. Receipts with and without a timestamp, and the days the timestamps span:

# %%
# count(): the timestamps present; no column when no logger added one.
has_column = "timestamp" in receipts.columns
dated = int(ea.collect(receipts["timestamp"].count())) if has_column else 0
print(f"with a timestamp: {dated}, without: {audit.rows('receipts') - dated}")
days = widgets.time_range(receipts) if dated else None
if days is None:
    print("no time window to show")
else:
    print(f"from {days[0]:%Y-%m-%d} to {days[-1]:%Y-%m-%d} (UTC, end exclusive)")

# %% [markdown]
# Withheld counts in the first two days of the log, per audience:

# %%
# The first two days, or every day when the log spans fewer.
window = None if days is None else (days[0], days[min(2, len(days) - 1)])
if window is None:
    print("no receipt has a timestamp")
else:
    first_days = ea.within_time_window(receipts, *window)
    early = ea.withheld_summary(first_days, by="withheld_audience", overall=True)
    display(labelled(early).round(3))

# %% [markdown]
# ## Explorer
#
# The explorer's view with its defaults (every audience, every space, no time window, grouped by scope):

# %%
widgets.withheld_view(audit)

# %% [markdown]
# The same view for one audience in one space, over the first two days, per outcome:

# %%
widgets.withheld_view(audit, audience="peer", space="harbor-ops", by="outcome", window=window)

# %% [markdown]
# The explorer's chart, records withheld per group of the view, for the same choice (its caption states the counts drawn):

# %% tags=["nbval-ignore-output"]
widgets.withheld_chart(audit, audience="peer", space="harbor-ops", by="outcome", window=window)

# %% [markdown]
# The interactive explorer. The day window's handles start at its open ends (`open (start)`, `open (end)`: every receipt, with or without a timestamp); each handle moves by mouse or by arrow keys, and the window is written out next to the slider:

# %% tags=["nbval-ignore-output"]
widgets.withheld_panel(audit)
