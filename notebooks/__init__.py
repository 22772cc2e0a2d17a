"""The notebooks that ship with the kit (as ``explicit_audit.notebooks``); nbval runs them here."""
