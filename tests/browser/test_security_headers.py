"""The Content-Security-Policy holds on every kind of page: ours, the API docs and Django admin
render and run their scripts under it, with no violation (docs/security.md)."""

import pytest

from tests.factories import UserFactory

pytestmark = pytest.mark.browser


def test_api_docs_and_django_admin_run_under_the_content_security_policy(page, login):
    UserFactory(username="root", is_staff=True, is_superuser=True)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    # Violations are reported on the console (Django admin's missing favicon is not one).
    page.on("console", lambda m: errors.append(m.text) if "Security Policy" in m.text else None)
    login("root")
    for path, expected in (
        ("/", "Projects"),
        ("/api/docs/", "ContrastLab API"),
        ("/admin/", "Site administration"),
        ("/admin/auth/user/add/", "Add user"),
    ):
        response = page.goto(path)
        page.wait_for_load_state("networkidle")
        assert response is not None and response.status == 200, path
        assert "script-src 'self'" in response.headers["content-security-policy"], path
        page.wait_for_selector(f"text={expected}")
        assert errors == [], (path, errors)


def test_django_admin_refuses_a_weak_password(page, login):
    from django.contrib.auth.models import User

    UserFactory(username="root", is_staff=True, is_superuser=True)
    login("root")
    page.goto("/admin/auth/user/add/")
    page.fill("input[name=username]", "newcomer")
    page.fill("input[name=password1]", "1")
    page.fill("input[name=password2]", "1")
    page.click("input[name=_save]")
    page.wait_for_selector("text=This password is too short")
    assert not User.objects.filter(username="newcomer").exists()
