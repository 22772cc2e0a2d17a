# %% [markdown]
# # How did the records, and what the checks found, move over time?
#
# Logs grow every day, and one report shows one moment. This notebook reads the records' own times (a logger's `timestamp` or `ts`, a plan's `started_at`, a request's `sent_at`) and counts, per day and per week, the records of each kind, the findings of each check (each in the period of the record it is about), the records authorization withheld, and the routing decisions escalated to the 26B model with their reasons. What has no time (a table without a time column, a missing or unparsed time, a finding about no record) is counted in a last row, `NaT`, so that every column sums to the records or findings it counts.

# %%
verification = ea.verify_all(audit)
daily = ea.trend(audit, "D", verification=verification)
dated = daily[daily.index.notna()]
if dated.empty:
    print(f"No record in {DATA} carries a time: there is no trend to show.")
else:
    first, last = dated.index.min(), dated.index.max()
    active = int((dated.filter(like="records.").sum(axis=1) > 0).sum())
    print(f"{first:%Y-%m-%d} to {last:%Y-%m-%d}: {len(dated):,} days, {active:,} with records.")

# %% [markdown]
# ## Per week
#
# Weeks run from Monday to Sunday (UTC), each labelled by its Monday; weeks with no record are left out of this table, not of the plots. `findings` and `notices` are the totals over every check:

# %%
weekly = ea.trend(audit, "W", verification=verification)
records = weekly.filter(like="records.")
summary = records.rename(columns=lambda name: name.removeprefix("records."))
summary["findings"] = weekly.filter(like="findings.").sum(axis=1)
summary["notices"] = weekly.filter(like="notices.").sum(axis=1)
for column in ("withheld.count", "escalation.rate"):
    if column in weekly:
        summary[column] = weekly[column]
summary.index = ["no time" if pd.isna(period) else f"{period:%Y-%m-%d}" for period in summary.index]
summary.index.name = "week from"
summary[records.sum(axis=1).to_numpy() > 0]

# %% [markdown]
# ## Records and findings per day
#
# Each kind's records per day, then each check's findings per day; a legend entry counts what has no time beside it:

# %% tags=["nbval-ignore-output"]
from explicit_audit.plots.trend import trend_columns

if not dated.empty:
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 6), sharex=True)
    plots.plot_trend(daily, trend_columns(daily, "records."), ax=top, title="Records per day")
    found = trend_columns(daily, "findings.")
    if found:
        plots.plot_trend(daily, found, ax=bottom, title="Findings per day")
    else:
        bottom.set_title("No check found anything")
    fig.tight_layout()
    plt.show()

# %% [markdown]
# ## Withheld records and escalations per day

# %% tags=["nbval-ignore-output"]
has_withheld = "withheld.count" in daily and daily["withheld.count"].any()
has_decisions = "escalation.decisions" in daily and dated["escalation.decisions"].any()
if has_withheld or has_decisions:
    fig, axes = plt.subplots(1, 2, figsize=(11, 3))
    if has_withheld:
        plots.plot_trend(daily, ["withheld.count"], ax=axes[0], title="Records withheld per day")
    if has_decisions:
        plots.plot_trend(
            daily, ["escalation.rate"], ax=axes[1], title="Decisions escalated per day"
        )
    fig.tight_layout()
    plt.show()
else:
    print("No withheld count and no dated routing decision to show.")

# %% [markdown]
# Escalation reasons per week (a decision may give several):

# %%
reasons = weekly.filter(like="escalation.reason.")
reasons = reasons.rename(columns=lambda name: name.removeprefix("escalation.reason."))
reasons.index = summary.index
reasons[reasons.sum(axis=1).to_numpy() > 0]
