"""Bundled configuration files: scenarios, reproductions and agent training configs (YAML)."""
