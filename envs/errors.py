"""The project's error classes. Messages say what is wrong, why, and how to fix it."""

from __future__ import annotations


class TutorZooError(Exception):
    """Base class of every TutorZoo error."""


class ConfigError(TutorZooError, ValueError):
    """A configuration value is invalid; the message names the field and the fix."""


class DatasetError(TutorZooError, ValueError):
    """A dataset file is malformed; the message names the file, the record and the fix."""
