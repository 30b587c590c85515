"""Loopback test servers shared by tests (not an installed package)."""
