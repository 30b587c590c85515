"""The test suite is a package: shared helpers import as `tests.<package>.<module>` from any test."""
