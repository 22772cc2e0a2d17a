# %% [markdown]
# # Did routing decisions follow policy, and what would other thresholds cost?
#
# The document server decides, per request, whether the 4B model answers or the task escalates to the 26B model, from a policy's three thresholds (context cap, multi-document count, confidence), its subject domains and its risk flags. This notebook replays every recorded decision under the policy it names and answers whether each follows it (the replay and the six invariants); then, for every policy variant, how the escalation rate moves across each threshold, which reasons drive escalation, and which decisions would flip. An explorer at the end has a slider per threshold and a variant picker.

# %% [markdown]
# Decisions that could not be loaded, and the policy variants:

# %%
rejected = audit.rejected[audit.rejected["kind"] == "decisions"]
rejected[["source_file", "source_line", "reason"]]

# %%
audit.policies.to_frame().drop(columns=["source_file"]).set_index("policy_id")

# %% [markdown]
# ## Replay verification
#
# Every recorded decision against the policy it names: the replay (field by field) and the invariants INV-1 to INV-6 (`ea.DECISION_RULES`). Findings per policy and rule:

# %%
findings = ea.check_decisions(audit.decisions, audit.policies)
# The policy each finding's decision names (ea.collect: only those rows).
named_policy = ea.collect(audit.decisions["policy_id"], rows=findings["row"])
findings["policy_id"] = named_policy.to_numpy()
findings.groupby(["policy_id", "rule"], observed=True).size().rename("findings").to_frame()

# %%
findings[["record", "policy_id", "rule", "field", "detail"]]

# %% tags=["nbval-ignore-output"]
fig, ax = plt.subplots(figsize=(7, 3))
plots.plot_finding_counts(findings, title="Decision findings per rule")
plt.show()

# %% [markdown]
# ## Escalation across each threshold
#
# Every decision under every variant, one threshold varied at a time (the other two at the variant's own values); dots mark each variant's own threshold.

# %%
import numpy as np

axes = {
    "context_char_cap_4b": range(0, 20001, 500),
    "escalate_on_multi_doc_count": range(1, 11),
    "confidence_threshold": np.round(np.linspace(0, 1, 41), 3),
}
policies = audit.policies.to_frame().set_index("policy_id")
swept = {
    name: ea.sweep(audit.decisions, audit.policies, {name: values}) for name, values in axes.items()
}

# %% tags=["nbval-ignore-output"]
# One pane per row: each keeps the page's width, so its axis text stays legible.
fig, panes = plt.subplots(3, 1, figsize=(9, 10))
for ax, (name, frame) in zip(panes, swept.items(), strict=True):
    plots.plot_escalation_curve(frame, threshold=name, current=policies[name], ax=ax, title="")
fig.suptitle("Share of decisions escalated to 26B, one threshold varied at a time")
fig.tight_layout()
plt.show()

# %% [markdown]
# The escalation rate at a few points of each axis:

# %%
points = {
    "context_char_cap_4b": [2000, 4000, 6000, 9000, 12000],
    "escalate_on_multi_doc_count": [1, 2, 3, 5, 8],
    "confidence_threshold": [0.3, 0.45, 0.6, 0.75, 0.9],
}
for name, values in points.items():
    frame = swept[name][swept[name][name].isin(values)]
    rates = frame.pivot(index=name, columns="policy_id", values="escalation_rate")
    display(Percentages(rates))  # escalation rates, shown as percentages

# %% [markdown]
# ## Reason mix
#
# Each variant at its own thresholds, over every decision: how many decisions carry each escalation reason.

# %%
as_written = ea.sweep(audit.decisions, audit.policies, {})
reasons = [c for c in as_written.columns if c.startswith("reason_")]
as_written.set_index("policy_id")[["decisions", "escalations", *reasons]]

# %% tags=["nbval-ignore-output"]
fig, ax = plt.subplots(figsize=(9, 4))
plots.plot_reason_mix(as_written, ax=ax)
plt.show()

# %% [markdown]
# ## Decisions that flip
#
# Against the recorded decisions: each variant at its own thresholds over every decision (what switching to it would change), and over only the decisions that name it (what its own log disagrees with):

# %%
named = ea.sweep(audit.decisions, audit.policies, {}, only_named=True)
flip_columns = ["decisions", "flips", "flips_to_26b", "flips_to_4b"]
pd.concat(
    {
        "every decision": as_written.set_index("policy_id")[flip_columns],
        "decisions naming it": named.set_index("policy_id")[flip_columns],
    },
    axis=1,
)

# %% [markdown]
# The decisions that their own policy, replayed, decides otherwise:

# %%
widgets.flips_view(audit, only_named=True, limit=None)

# %% [markdown]
# Across variants: how many decisions each pattern of escalation (per variant, at its own thresholds) covers; rows where the variants disagree are the decisions a change of policy would flip.

# %%
ea.escalation_patterns(audit.decisions, audit.policies)

# %% [markdown]
# ## Explorer
#
# The explorer's views with their defaults (every variant at its own thresholds, over every decision):

# %%
widgets.sweep_view(audit)

# %%
widgets.flips_view(audit, limit=5)

# %% [markdown]
# The same views with the confidence threshold at 0.7 for every variant:

# %%
widgets.sweep_view(audit, confidence_threshold=0.7)

# %% [markdown]
# The explorer's chart: the escalation rate across the threshold last moved, the other two held where the sliders are, with a marker where each variant stands (one `ea.sweep` over the axis). The markers at 0.7, then each variant at its own thresholds:

# %%
at_07 = widgets.escalation_curve_view(audit, confidence_threshold=0.7)
own = widgets.escalation_curve_view(audit, own_thresholds=True)
pd.concat({"sliders at 0.7": at_07.markers, "own thresholds": own.markers}, axis=1).round(3)

# %% tags=["nbval-ignore-output"]
widgets.escalation_chart(audit, confidence_threshold=0.7)

# %% [markdown]
# The interactive explorer. It starts with each variant at its own thresholds; moving a slider applies the sliders' thresholds to every variant picked and charts that threshold, and the toggle goes back to each variant's own. Picking one variant while at its own thresholds moves the sliders to them:

# %% tags=["nbval-ignore-output"]
widgets.sweep_panel(audit)
