"""Operator endpoints beside the API: health, readiness, metrics and the API reference."""
