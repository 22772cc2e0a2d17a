# %% [markdown]
# # Do the recorded plan and request hashes hold?
#
# arborist records a `retrieval_plan_hash` with every run, and explicit_learning's C2 compiler records a `request_sha256` with every compile request. This notebook rebuilds both from the records exactly as written and answers: how many recorded hashes hold; for each one that does not, which known writer or edit reproduces it (the diagnosis) or whether none does (the plan or its hash changed after hashing); whether any compile-request payload carries a key the §7.1 hiding rule forbids; and whether every model asked about one `base_id` received the same payload (independence). A plan editor at the end shows how each field moves the hash, and that a plan whose MT fields are all empty keeps its pre-MT hash.

# %% [markdown]
# Inputs of these two kinds that could not be loaded (file, line, reason):

# %%
rejected = audit.rejected[audit.rejected["kind"].isin(["plans", "requests"])]
rejected[["source_file", "source_line", "kind", "reason"]]

# %% [markdown]
# ## Retrieval plans
#
# Every recorded `retrieval_plan_hash`, rebuilt with arborist's own canonical JSON (sorted keys, compact, non-ASCII escaped, MT block only when an MT field is set). Plans per verification status:

# %%
checked = ea.plan_verdicts(audit.plans)
# ea.collect: a small result in memory, on either engine (here, the counts).
ea.collect(checked["status"].value_counts(sort=False)).rename("plans").to_frame()

# %% tags=["nbval-ignore-output"]
fig, ax = plt.subplots(figsize=(7, 2.8))
plots.plot_hash_verification(checked, ax=ax)
plt.show()

# %% [markdown]
# The mismatches, with the variant that reproduces each recorded hash:

# %%
mismatches = ea.collect(checked[~checked["match"]])
mismatches[["run_id", "source_file", "source_line", "status", "variant", "diagnosis"]]

# %%
by_variant = mismatches.groupby(["status", "variant"], observed=True, dropna=False)
by_variant.size().to_frame("plans")

# %% [markdown]
# ## Compile requests
#
# `request_sha256` rebuilt in the default dialect (Python `json.dumps`, sorted keys, compact, non-ASCII raw); a mismatch is tested against every other known dialect. Findings per rule and severity:

# %%
findings = ea.check_requests(audit.requests)
findings.groupby(["rule", "severity"], observed=True).size().rename("findings").to_frame()

# %% tags=["nbval-ignore-output"]
fig, ax = plt.subplots(figsize=(7, 2.8))
plots.plot_finding_counts(findings, title="Compile-request findings")
plt.show()

# %% [markdown]
# ### Hash mismatches, and the dialect that explains each, if any

# %%
columns = ["record", "source_file", "source_line", "rule", "severity", "detail"]
hashes = findings["check"] == "request_hashes"
findings.loc[hashes, columns]

# %% [markdown]
# ### The hiding rule (§7.1)
#
# A payload never carries a forbidden key at its top level (`forbidden_key`, an error); the same names nested deeper, which the producer's builder allows, are reported as a notice (`forbidden_key_nested`).

# %%
hiding = findings["check"] == "request_hiding_rule"
findings.loc[hiding, ["record", "source_line", "rule", "severity", "field", "detail"]]

# %% [markdown]
# ### Independence
#
# Every model asked about one `base_id` must compile from the same payload; a breach is reported on every request of the `base_id`.

# %%
independence = findings["rule"] == "independence"
findings.loc[independence, ["record", "source_line", "detail"]]

# %% [markdown]
# ## Plan editor
#
# The view behind the editor, rendered for the first recorded plan: the canonical JSON arborist hashes, its hash, and the hash of the same plan with every MT field empty (the pre-MT hash).

# %%
plans_recorded = audit.rows("plans") > 0
if plans_recorded:
    first_plan = ea.collect(audit.plans["plan"], head=1).iloc[0]
    display(widgets.plan_view(first_plan))
else:
    print(f"No retrieval plan in {DATA}: the editor has no recorded plan to start from.")

# %% [markdown]
# Setting an MT field adds the `mt` block and changes the hash; setting every MT field to the empty string leaves the block out, so the hash is the pre-MT hash. One non-ASCII keyword is written `\uXXXX`-escaped, as Python's `json.dumps` does by default:

# %%
if plans_recorded:
    edits = {
        "as recorded": {},
        "MT engine set": {"mt_engine": "nllb-200", "source_lang": "ko"},
        "MT fields empty": {"mt_engine": "", "mt_manifest_hash": "", "source_lang": ""},
        "top_k + 1": {"top_k": widgets.plan_view(first_plan).fields["top_k"] + 1},
        "Korean keywords": {"retrieval_keywords": "서울 예산"},
    }
    previews = {name: widgets.plan_view(first_plan, **change) for name, change in edits.items()}
    display(
        pd.DataFrame(
            {
                "retrieval_plan_hash": [p.plan_hash for p in previews.values()],
                "mt_block": [p.mt_block for p in previews.values()],
                "equals_pre_mt_hash": [p.hash_unchanged_by_mt for p in previews.values()],
            },
            index=pd.Index(list(previews), name="edit"),
        )
    )

# %%
if plans_recorded:
    display(previews["Korean keywords"])

# %% [markdown]
# The editor reads what is typed as the seed's `canonical()` reads it: `int()` on the counts (so an emptied `top_k` is refused, not kept at its old value, and `" 8 "` is hashed as 8), strings as written (so an MT field holding one space counts as set and moves the hash). What the seed would refuse is an error and no hash is shown; what it accepts but is likely a slip is a warning:

# %%
slips = {
    "top_k emptied": {"top_k": ""},
    "top_k = -3": {"top_k": "-3"},
    "top_k typed ' 8 '": {"top_k": " 8 "},
    "MT manifest hash = ' '": {"mt_manifest_hash": " "},
}
if plans_recorded:
    checked_edits = {
        name: widgets.plan_edit_view(first_plan, **change) for name, change in slips.items()
    }
    display(
        pd.DataFrame(
            [
                (name, m.field, m.level, m.text)
                for name, edit in checked_edits.items()
                for m in edit.messages
                if m.field != "shard_ids"
            ],
            columns=["edit", "field", "level", "message"],
        ).set_index(["edit", "field"])
    )
else:
    print("No retrieval plan to edit.")

# %% [markdown]
# The interactive editor (change keywords, `top_k`, shards or the MT fields and watch the checks, the canonical JSON and the hash; whitespace is shown as Python writes it, `' '`):

# %% tags=["nbval-ignore-output"]
widgets.plan_panel(first_plan) if plans_recorded else None
