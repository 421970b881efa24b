"""Registers the fixtures of clitool.py for the command-line tool's tests."""

from clitool import c_maker, key_files  # noqa: F401 (pytest finds fixtures by name)
