"""The end-to-end tests' helper modules hold checks shared by several test modules: pytest
rewrites their asserts as it does a test module's, so a failing check shows what it
compared."""

from __future__ import annotations

import pytest

pytest.register_assert_rewrite("tests.e2e.drift_world")
