"""Single sign-on in Chromium, through a real OpenID Connect provider in its own process
(tests/sso_provider/): an invited person joins by signing in, where only staff have passwords."""

from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token

from annotation.models import Membership
from annotation.projects.services import invites
from tests.browser.conftest import screenshot
from tests.factories import ProjectFactory, UserFactory

User = get_user_model()


def test_an_invited_person_joins_by_signing_in_with_the_labs_provider(  # type: ignore[no-untyped-def]
    issuer, site, page, settings
):
    settings.PASSWORD_LOGIN = "staff"
    project = ProjectFactory(slug="lab", name="Lab negations")
    admin = UserFactory(username="alice")
    person = invites.parse_people("ada@lab.example, expert", [])
    (invited,) = invites.people_add(project=project, actor=admin, people=person, site="")

    page.goto(site + invited["link"])  # the provider's host: their cookies meet
    assert page.locator("#join-roles").inner_text() == "expert"
    assert page.locator("input[type=password]").count() == 0  # passwords are for staff
    screenshot(page, "sso-join")
    page.click("#sso-start")

    page.wait_for_selector("text=Lab identity provider")
    assert page.url.startswith(issuer.removesuffix("/o") + "/login/")
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password]", "ada-pw")
    page.keyboard.press("Enter")

    page.wait_for_selector("#join-member")
    assert page.url == f"{site}{invited['link']}"
    assert "You joined Lab negations." in page.locator(".messages").inner_text()
    screenshot(page, "sso-joined")
    made = User.objects.get(email="ada@lab.example")
    assert Membership.objects.filter(project=project, user=made, role="expert").exists()
    page.click("text=Open the project")
    page.wait_for_url(f"{site}/p/lab/**")

    # Without a password, the API's token is made on its page, from the header.
    page.click("header >> text=API")
    page.click("#token-make")
    key = page.locator("#token-key").input_value()
    assert Token.objects.get(user=made).key == key
    screenshot(page, "sso-token")


def test_the_login_page_leads_with_the_provider_and_keeps_passwords_for_staff(  # type: ignore[no-untyped-def]
    site, page, settings
):
    settings.PASSWORD_LOGIN = "staff"
    UserFactory(username="erin", email="erin@lab.example")
    page.goto(f"{site}/accounts/login/")
    assert page.locator("#sso-start").inner_text() == "Sign in with Lab ID"
    assert not page.locator("input[name=password]").is_visible()  # folded under "Staff"
    screenshot(page, "sso-login")

    page.click("#staff-password summary")
    page.fill("input[name=username]", "erin")
    page.fill("input[name=password]", "pw")
    page.keyboard.press("Enter")
    page.wait_for_selector("#login-error")
    assert "Only staff sign in with a password here" in page.locator("#login-error").inner_text()
    assert page.locator("#staff-password").get_attribute("open") is not None


def test_signing_out_signs_out_of_the_provider_so_the_next_person_gives_a_password(  # type: ignore[no-untyped-def]
    issuer, site, page
):
    """A shared lab computer: after "Log out", "Sign in with Lab ID" asks for a password."""
    provider_login = issuer.removesuffix("/o") + "/login/"
    page.goto(f"{site}/accounts/login/")
    page.click("#sso-start")
    page.wait_for_url(f"{provider_login}**")
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password]", "ada-pw")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{site}/")
    assert page.locator("header .who").inner_text() == "ada"

    page.click("header >> text=Log out")
    page.wait_for_url(f"{site}/accounts/login/")
    assert page.locator("header .who").count() == 0
    screenshot(page, "sso-signed-out")

    page.click("#sso-start")
    page.wait_for_url(lambda url: url.startswith(provider_login) or url == f"{site}/")
    assert page.url.startswith(provider_login), page.url  # not ada, signed straight back in
    assert page.locator("input[name=password]").is_visible()
