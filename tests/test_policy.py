"""Routing policies: loading YAML, errors naming file and key, hashing, variants, sets."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

import explicit_audit as ea
from explicit_audit.decisions.policies import load_policy_files

DATA = Path(__file__).parent / "data"
EXAMPLE = DATA / "routing_policy_example.yaml"
KNOWN = json.loads((DATA / "routing_known_answers.json").read_text(encoding="utf-8"))


def _write(path: Path, data) -> Path:
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def test_load_example_policy():
    policy = ea.load_policy(EXAMPLE)
    assert policy.policy_id == "baseline"
    assert policy.escalation == ea.Escalation(6000, 3, 0.6)
    assert policy.subject_domains["legal"] == ea.SubjectDomain(True, ("legal_advice",))
    assert policy.fallback_domain == ea.FallbackDomain("general", False, ())
    assert policy.risk_flags["low_confidence_reasoning"] == ea.RiskFlag(True, None)
    assert policy.source_file == str(EXAMPLE)


def test_content_hash_follows_the_documented_recipe():
    policy = ea.load_policy(EXAMPLE)
    raw = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    rules = {key: raw[key] for key in ("escalation", "subject_domains", "fallback_domain")}
    rules["risk_flags"] = {
        name: {"requires_26b": spec["requires_26b"], "synthesis_directive": None} | spec
        for name, spec in raw["risk_flags"].items()
    }
    text = json.dumps(rules, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert policy.content_hash == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_hash_ignores_names_and_order_but_not_rules(tmp_path):
    raw = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    policy = ea.Policy.from_dict(raw)
    renamed = dict(raw, policy_id="other", description="same rules")
    renamed["subject_domains"] = dict(reversed(list(raw["subject_domains"].items())))
    renamed["escalation"] = dict(raw["escalation"], confidence_threshold=0.6)
    same = ea.Policy.from_dict(renamed)
    assert same.content_hash == policy.content_hash
    assert same != policy  # the id differs
    changed = json.loads(json.dumps(raw))
    changed["subject_domains"]["finance"]["high_impact"] = True
    assert ea.Policy.from_dict(changed).content_hash != policy.content_hash
    path = _write(tmp_path / "copy.yaml", raw)
    assert ea.load_policy(path).content_hash == policy.content_hash


def test_policy_is_immutable():
    policy = ea.load_policy(EXAMPLE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.policy_id = "x"
    with pytest.raises(TypeError):
        policy.subject_domains["new"] = ea.SubjectDomain(False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.escalation.context_char_cap_4b = 1
    assert hash(policy) == hash(ea.load_policy(EXAMPLE))


def test_with_escalation_makes_a_new_policy():
    policy = ea.load_policy(EXAMPLE)
    cheaper = policy.with_escalation(context_char_cap_4b=9000, confidence_threshold=0.5)
    assert cheaper.escalation == ea.Escalation(9000, 3, 0.5)
    assert cheaper.policy_id == "baseline[cap=9000,conf=0.5]"
    assert cheaper.content_hash != policy.content_hash
    assert policy.escalation == ea.Escalation(6000, 3, 0.6)
    assert cheaper.subject_domains == policy.subject_domains
    named = policy.with_escalation(escalate_on_multi_doc_count=4, policy_id="four_docs")
    assert named.policy_id == "four_docs"
    with pytest.raises(ea.PolicyError, match="confidence_threshold"):
        policy.with_escalation(confidence_threshold=1.5)
    with pytest.raises(ea.PolicyError, match="context_char_cap_4b"):
        policy.with_escalation(context_char_cap_4b=-1)


def test_replace_parts_of_a_policy():
    policy = ea.load_policy(EXAMPLE)
    flags = dict(policy.risk_flags)
    flags["numeric_claims"] = ea.RiskFlag(requires_26b=True, synthesis_directive="Check sums.")
    variant = policy.replace(risk_flags=flags)
    assert variant.risk_flags["numeric_claims"].requires_26b
    assert variant.policy_id == f"baseline~{variant.content_hash[:8]}"
    assert not policy.risk_flags["numeric_claims"].requires_26b
    domains = dict(policy.subject_domains) | {"hr": {"high_impact": True}}
    with_hr = policy.replace(subject_domains=domains, policy_id="with_hr")
    assert with_hr.subject_domains["hr"] == ea.SubjectDomain(True, ())
    with pytest.raises(ea.PolicyError, match=r"subject_domains\.hr\.high_impact"):
        policy.replace(subject_domains={"hr": {"high_impact": "yes"}})
    assert ea.Policy.from_dict(policy.to_dict()) == policy


def _example() -> dict:
    return yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))


def _set(data: dict, dotted: str, value) -> dict:
    *parents, last = dotted.split(".")
    node = data
    for part in parents:
        node = node[part]
    if value is _DELETE:
        del node[last]
    else:
        node[last] = value
    return data


_DELETE = object()
BAD = [
    ("surprise", 1, "surprise", "unknown key"),
    ("escalation.cap", 5, "escalation.cap", "unknown key"),
    ("subject_domains.legal.impact", True, "subject_domains.legal.impact", "unknown key"),
    ("escalation", _DELETE, "escalation", "missing"),
    ("fallback_domain.name", _DELETE, "fallback_domain.name", "missing"),
    ("risk_flags.legal_advice.requires_26b", _DELETE, "requires_26b", "missing"),
    ("escalation.context_char_cap_4b", "6000", "context_char_cap_4b", "whole number"),
    ("escalation.context_char_cap_4b", 6000.5, "context_char_cap_4b", "whole number"),
    ("escalation.context_char_cap_4b", -1, "context_char_cap_4b", "between 0"),
    ("escalation.escalate_on_multi_doc_count", -3, "escalate_on_multi_doc_count", "between"),
    ("escalation.confidence_threshold", 1.5, "confidence_threshold", r"\[0, 1\]"),
    ("escalation.confidence_threshold", -0.1, "confidence_threshold", r"\[0, 1\]"),
    ("escalation.confidence_threshold", float("nan"), "confidence_threshold", r"\[0, 1\]"),
    ("escalation.confidence_threshold", True, "confidence_threshold", "number"),
    ("subject_domains.legal.high_impact", "yes", "high_impact", "true or false"),
    ("subject_domains.legal.default_risk_flags", "legal_advice", "default_risk_flags", "list"),
    ("risk_flags.legal_advice.synthesis_directive", 3, "synthesis_directive", "string"),
    ("policy_id", "", "policy_id", "empty"),
    ("subject_domains", True, "subject_domains", "expected a mapping"),
    ("risk_flags", ["legal_advice"], "risk_flags", "expected a mapping"),
]


@pytest.mark.parametrize(("key", "value", "named", "reason"), BAD)
def test_bad_policy_names_file_line_and_key(tmp_path, key, value, named, reason):
    path = _write(tmp_path / "bad.yaml", _set(_example(), key, value))
    with pytest.raises(ea.PolicyError, match=reason) as caught:
        ea.load_policy(path)
    message = str(caught.value)
    assert str(path) in message and named in message
    line = caught.value.source_line
    if key == "escalation":  # a missing top-level section has no line to point at
        assert line is None
    else:
        assert line is not None and 1 <= line <= len(path.read_text().splitlines())


def test_python_tag_is_refused(tmp_path):
    path = tmp_path / "tagged.yaml"
    path.write_text(
        EXAMPLE.read_text() + "extra: !!python/object/apply:os.system ['true']\n", "utf-8"
    )
    with pytest.raises(ea.PolicyError, match="Python tag") as caught:
        ea.load_policy(path)
    assert str(path) in str(caught.value)
    assert caught.value.source_line == len(path.read_text().splitlines())


@pytest.mark.parametrize(
    ("text", "reason"),
    [("", "empty"), ("policy_id: [unclosed\n", "not valid YAML"), ("- a\n- b\n", "mapping")],
)
def test_unreadable_yaml(tmp_path, text, reason):
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ea.PolicyError, match=reason):
        ea.load_policy(path)


def test_policy_id_defaults_to_the_file_stem(tmp_path):
    data = _example()
    del data["policy_id"]
    assert ea.load_policy(_write(tmp_path / "winter.yaml", data)).policy_id == "winter"
    with pytest.raises(ea.PolicyError, match="policy_id"):
        ea.Policy.from_dict(data)


def test_load_policy_files_collects_rejections(tmp_path):
    good = _write(tmp_path / "a.yaml", _example())
    bad = _write(tmp_path / "b.yaml", _set(_example(), "escalation.confidence_threshold", 2))
    twin = _write(tmp_path / "c.yaml", _example())
    policies, rejected = load_policy_files([good, bad, twin], strict=False)
    assert list(policies) == ["baseline"]
    assert [(r.source_file, r.kind) for r in rejected] == [
        (str(bad), "policies"),
        (str(twin), "policies"),
    ]
    assert "confidence_threshold" in rejected[0].reason
    assert rejected[0].source_line == 5 and "confidence_threshold" in rejected[0].raw
    assert "already used" in rejected[1].reason
    with pytest.raises(ea.PolicyError, match="confidence_threshold"):
        load_policy_files([good, bad], strict=True)


def test_load_policies_from_a_folder_and_policy_set(tmp_path):
    for name, data in KNOWN["policies"].items():
        _write(tmp_path / f"{name}.yml", data)
    policies = ea.load_policies(tmp_path)
    assert list(policies) == sorted(KNOWN["policies"])
    assert len(policies) == 4 and "kat_base" in policies
    frame = policies.to_frame()
    assert list(frame.columns) == list(ea.PolicySet.COLUMNS)
    assert frame.set_index("policy_id").loc["kat_base", "context_char_cap_4b"] == 6000
    assert frame["confidence_threshold"].dtype == "float64"
    assert "<table" in policies._repr_html_()
    assert "kat_derived" in repr(policies)
    with pytest.raises(ea.PolicyError, match="already used"):
        ea.PolicySet([policies["kat_base"], policies["kat_base"]])
    assert len(ea.PolicySet()) == 0


def test_ea_load_finds_policies_and_rejects_bad_yaml(tmp_path):
    shutil.copy(EXAMPLE, tmp_path / "baseline.yaml")
    (tmp_path / "broken.yaml").write_text("policy_id: x\nescalation: !!python/name:os.system\n")
    with pytest.warns(ea.RejectedRowsWarning):
        audit = ea.load(tmp_path, progress=False)
    assert isinstance(audit.policies, ea.PolicySet)
    assert list(audit.policies) == ["baseline"]
    rejected = audit.rejected[audit.rejected["kind"] == "policies"]
    assert rejected["source_file"].tolist() == [str(tmp_path / "broken.yaml")]
    assert rejected["source_line"].tolist() == [2]
    with pytest.raises(ea.PolicyError, match="Python tag"):
        ea.load(tmp_path, strict=True, progress=False)


def test_policy_set_frame_of_nothing():
    frame = ea.PolicySet().to_frame()
    assert len(frame) == 0 and isinstance(frame, pd.DataFrame)


# YAML as safe_load reads it, merge keys included; duplicate keys refused ---------------------

MERGED = """\
policy_id: merged
escalation:
  context_char_cap_4b: 6000
  escalate_on_multi_doc_count: 3
  confidence_threshold: 0.6
subject_domains:
  finance: &plain
    high_impact: false
    default_risk_flags: []
  legal:
    <<: *plain
    high_impact: true
    default_risk_flags: [legal_advice]
  hr:
    <<: *plain
fallback_domain:
  <<: *plain
  name: general
risk_flags:
  low_confidence_reasoning: &needs_26b
    requires_26b: true
  legal_advice:
    <<: [*needs_26b]
    synthesis_directive: Cite the governing clause.
  numeric_claims: {<<: *needs_26b, requires_26b: false}
"""


def test_merge_keys_read_as_safe_load_reads_them(tmp_path):
    path = tmp_path / "merged.yaml"
    path.write_text(MERGED, encoding="utf-8")
    policy = ea.load_policy(path)
    assert policy.subject_domains["legal"] == ea.SubjectDomain(True, ("legal_advice",))
    assert policy.subject_domains["hr"] == ea.SubjectDomain(False, ())
    assert policy.fallback_domain == ea.FallbackDomain("general", False, ())
    assert policy.risk_flags["legal_advice"] == ea.RiskFlag(True, "Cite the governing clause.")
    assert policy.risk_flags["numeric_claims"] == ea.RiskFlag(False, None)
    # The same policy written out without merge keys, as yaml.safe_load reads the file.
    flat = _write(tmp_path / "flat.yaml", yaml.safe_load(MERGED))
    assert "<<" not in flat.read_text(encoding="utf-8")
    assert ea.load_policy(flat).to_dict() == policy.to_dict()


@pytest.mark.parametrize(
    "text",
    [
        # the same key written twice by one mapping
        "policy_id: a\npolicy_id: b\n",
        # twice in a mapping that is merged elsewhere
        "base: &b {high_impact: true, high_impact: false}\nx:\n  <<: *b\n",
        # twice in a merge source defined in place
        "x:\n  <<: {name: a, name: b}\n",
        # two merge keys in one mapping
        "a: &a {k: 1}\nx:\n  <<: *a\n  <<: *a\n",
    ],
)
def test_duplicate_keys_are_still_refused(tmp_path, text):
    path = tmp_path / "twice.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ea.PolicyError, match="twice"):
        ea.load_policy(path)


def test_an_overridden_merged_key_is_not_a_duplicate(tmp_path):
    text = EXAMPLE.read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    cap = data["escalation"]["context_char_cap_4b"]
    override = text.replace(
        "escalation:\n",
        f"escalation:\n  <<: {{context_char_cap_4b: {cap + 1}}}\n",
        1,
    )
    assert override != text
    path = tmp_path / "override.yaml"
    path.write_text(override, encoding="utf-8")
    # The key the mapping writes itself wins, as yaml.safe_load has it.
    assert yaml.safe_load(override)["escalation"]["context_char_cap_4b"] == cap
    assert ea.load_policy(path).escalation.context_char_cap_4b == cap


def test_strict_load_raises_an_input_error_for_a_bad_policy(tmp_path):
    shutil.copy(EXAMPLE, tmp_path / "baseline.yaml")
    bad = _write(tmp_path / "bad.yaml", _set(_example(), "escalation.confidence_threshold", 2))
    with pytest.raises(ea.InputError, match="confidence_threshold") as caught:
        ea.load(tmp_path, strict=True, progress=False)
    assert isinstance(caught.value, ea.PolicyError)
    assert caught.value.source_file == str(bad)
    assert caught.value.source_line == 5
    # ea.load_policy still names the policy error itself
    with pytest.raises(ea.PolicyError):
        ea.load_policy(bad)


# Lines as an editor counts them ---------------------------------------------------------

#: What YAML 1.1 (PyYAML and libyaml) ends a line at and YAML 1.2, editors and ``grep -n``
#: do not: NEL, the line separator and the paragraph separator, here inside a quoted value.
UNUSUAL = ["\x85", "\u2028", "\u2029"]

#: A fault put on one line of the example policy: (what replaces the line, what is refused).
FAULTS = {
    "value": ("  context_char_cap_4b: lots", "expected a whole number"),
    "tag": ("  context_char_cap_4b: !!python/object/apply:os.system ['true']", "Python tag"),
    "repeated key": ("  confidence_threshold: 0.5", "confidence_threshold"),
}


def _editor_line(text: str, needle: str) -> int:
    """The line ``grep -n`` prints for the first line holding ``needle``."""
    return text[: text.index(needle)].count("\n") + 1


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("unusual", UNUSUAL)
@pytest.mark.parametrize(("newline", "bom"), [("\n", ""), ("\r\n", "\ufeff")])
def test_a_policy_fault_is_named_where_an_editor_shows_it(tmp_path, fault, unusual, newline, bom):
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    named = next(i for i, line in enumerate(lines) if line.startswith("policy_id:"))
    lines.insert(named + 1, f'description: "In force{unusual}from 2026-01-01{unusual}."')
    at = next(i for i, line in enumerate(lines) if "context_char_cap_4b" in line)
    replacement, reason = FAULTS[fault]
    if fault == "repeated key":  # the section names confidence_threshold twice
        lines.insert(at + 3, replacement)
    else:
        lines[at] = replacement
    text = bom + newline.join(lines) + newline
    path = tmp_path / "p.yaml"
    path.write_bytes(text.encode("utf-8"))
    line = _editor_line(text, replacement)
    assert line > named + 2  # past the unusual characters
    with pytest.raises(ea.PolicyError, match=reason) as caught:
        ea.load_policy(path)
    assert caught.value.source_line == line, str(caught.value)
    _, (rejected,) = load_policy_files([path], strict=False)
    assert rejected.source_line == line
    assert rejected.raw == replacement.strip()


def test_a_parameters_file_names_the_line_an_editor_shows(tmp_path, capsys):
    from explicit_audit.cli import main

    values = tmp_path / "params.yaml"
    values.write_text('LABEL: "a\u2028b\u2029c"\nTOP_N: 3: 4\n', encoding="utf-8")
    assert main(["report", str(DATA), "--out", str(tmp_path / "out"), "-f", str(values)]) == 2
    assert f"{values}, line 2: not valid YAML" in capsys.readouterr().err


# What YAML 1.1 and YAML 1.2 read alike --------------------------------------------------

#: (the example's line it replaces, the line, its value, what YAML 1.1 and YAML 1.2 read)
TWO_READINGS = [
    ("context_char_cap_4b:", "  context_char_cap_4b: 06000", "06000", "3072", "6000"),  # octal
    ("escalate_on_multi_doc", "  escalate_on_multi_doc_count: 1:30", "1:30", "90", "'1:30'"),
    ("context_char_cap_4b:", "  context_char_cap_4b: 6_000", "6_000", "6000", "'6_000'"),
    ("legal:", "  legal: {high_impact: yes, default_risk_flags: []}", "yes", "True", "'yes'"),
    ("legal:", "  no: {high_impact: true, default_risk_flags: []}", "no", "False", "'no'"),
    ("confidence_threshold:", "  confidence_threshold: 6e-1", "6e-1", "'6e-1'", "0.6"),
]
#: A line libyaml refuses and PyYAML's own parser reads: the file is then read by the latter.
LIBYAML_REFUSES = 'description: "x\\ud800"'


@pytest.mark.parametrize(("replaced", "line", "value", "old", "new"), TWO_READINGS)
@pytest.mark.parametrize("refused_by_libyaml", [False, True])
def test_a_plain_value_two_yaml_versions_read_apart_is_refused_where_it_is(
    tmp_path, replaced, line, value, old, new, refused_by_libyaml
):
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    at = next(i for i, text in enumerate(lines) if text.strip().startswith(replaced))
    lines[at] = line
    if refused_by_libyaml:  # a top-level key, before the rest
        lines.insert(1, LIBYAML_REFUSES)
        at += 1
    path = _write_text(tmp_path / "p.yaml", "\n".join(lines) + "\n")
    _, (rejected,) = load_policy_files([path], strict=False)
    says = f"{value} is {old} to a YAML 1.1 reader (PyYAML) and {new} to a YAML 1.2 reader"
    assert says in rejected.reason, rejected.reason
    assert rejected.source_line == at + 1
    assert rejected.raw == line.strip()


def _write_text(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "line",
    [
        "  context_char_cap_4b: 0x1770",  # hexadecimal to both
        "  context_char_cap_4b: !!int 6000",  # tagged
        "  confidence_threshold: 6.0e-1",  # a float to both
        'description: "yes"',  # quoted: text to both
        "description: on time",  # more than one word: text to both
    ],
)
def test_a_value_both_yaml_versions_read_alike_loads(tmp_path, line):
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    key = line.strip().split(":", 1)[0]
    at = next((i for i, text in enumerate(lines) if text.strip().startswith(f"{key}:")), None)
    if at is None:
        lines.insert(2, line)
    else:
        lines[at] = line
    path = _write_text(tmp_path / "p.yaml", "\n".join(lines) + "\n")
    policy = ea.load_policy(path)
    assert policy.escalation == ea.Escalation(6000, 3, 0.6)
