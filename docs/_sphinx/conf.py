"""Sphinx configuration of the documentation site (``make docs``).

It lives apart from the pages, in ``docs/_sphinx``, because ``docs/`` is also the
package ``explicit_audit.docs`` (it ships ``formats.md`` in the wheel): a ``conf.py``
beside the pages would ship as a module of the kit. ``make docs`` names this folder
with ``sphinx-build -c``.
"""

from __future__ import annotations

import explicit_audit

project = "explicit_audit"
author = "the explicit_audit authors"
copyright = "the explicit_audit authors"
release = explicit_audit.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
# Folders of the package beside the pages, and what the build writes, are no pages.
exclude_patterns = ["_sphinx", "__pycache__", "_build"]

# Markdown pages are plain CommonMark and GitHub tables, readable on any forge; headings
# get anchors down to level 3 so that the README and the pages can link into sections.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]

# The API reference: the docstrings are numpydoc; a class's members are listed by
# autodoc itself, so numpydoc adds no member table (which would need a page per member).
autodoc_typehints = "none"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False}
autosummary_generate = False
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "alabaster"
html_title = f"explicit_audit {release}"
html_theme_options = {"description": "Audit the records of AI retrieval and routing systems."}
# No page loads anything from the network: the search index is built in, nothing else.
html_show_sourcelink = False

# Cross-references are checked (``sphinx-build -n``). The reference documents the names
# of ``explicit_audit.__all__``; a docstring that names an internal module, a module's
# constant (``FINDING_COLUMNS``) or one of these internal functions keeps it as code,
# unlinked. Any other unresolved reference fails the build.
nitpicky = True
nitpick_ignore_regex = [
    ("py:mod", r"explicit_audit\..*"),
    ("py:data", r"(explicit_audit\.[\w.]+\.)?[A-Z][A-Z0-9_]*"),
]
nitpick_ignore = [
    ("py:func", "with_heads_as_needed"),
    ("py:func", "library_versions"),
    ("py:func", "hash_dialects"),
    ("py:func", "locator_record_id"),
]
