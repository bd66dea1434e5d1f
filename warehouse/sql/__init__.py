"""Versioned migration scripts (a package so that setuptools ships the ``*.sql`` files)."""
