"""Online evaluation: progressive (prequential) validation, regret comparators."""

from ._progressive import progressive_validation

__all__ = ["progressive_validation"]
