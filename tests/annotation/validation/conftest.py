"""Fixtures of the validation tests: a crowd of validators and a project without controls."""

import pytest

from tests.factories import member


@pytest.fixture
def crowd(project):  # type: ignore[no-untyped-def]
    return [member(project, f"val{i}", "validator") for i in range(8)]


@pytest.fixture
def no_controls(project):  # type: ignore[no-untyped-def]
    project.settings = {**project.settings, "control_rate": 0}
    project.save()
    return project
