"""Tests of the tagq Python client (run_tests.sh runs them)."""
