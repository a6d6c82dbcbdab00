"""Single sign-on against a real OpenID Connect provider (django-oauth-toolkit's, in its own
process: tests/sso_provider/), driven over HTTP as a browser would: every redirect followed,
the provider's own login form filled in. The browser's walk is tests/browser/test_sso_flow.py."""

import base64
import html
import json
import re
from urllib.parse import parse_qs, quote, urljoin, urlsplit

import pytest
import requests
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotation.errors import ImportRejected
from annotation.models import AccountOrigin, Invitation, Membership
from annotation.projects.services import invites, members_of
from config import sso
from tests.factories import ProjectFactory, UserFactory
from tests.sso_provider.running import CLIENT_ID, PEOPLE, provider

User = get_user_model()


def provider_form(session: requests.Session, site: str, next: str = "") -> tuple[str, dict]:  # type: ignore[type-arg]
    """Click "Sign in with Lab ID": the provider's login form's address, and its hidden
    fields."""
    start = f"{site}/accounts/sso/" + (f"?next={quote(next)}" if next else "")
    form = session.get(start, timeout=30)
    assert "Lab identity provider" in form.text, form.url  # the provider's own page
    hidden = re.findall(r'name="(csrfmiddlewaretoken|next)" value="([^"]*)"', form.text)
    return form.url, {name: html.unescape(value) for name, value in hidden}


def sign_in(site: str, username: str, password: str, next: str = "") -> requests.Response:
    """Sign in on the provider's page, and come back: the last answer, with the session's
    cookies on `.session`."""
    session = requests.Session()
    url, fields = provider_form(session, site, next)
    answer = session.post(
        url, data={**fields, "username": username, "password": password}, timeout=30
    )
    answer.session = session  # type: ignore[attr-defined]
    return answer


def signed_in_as(answer: requests.Response, site: str) -> str:
    """The username the site's session (its cookie in the answer's session) belongs to; ""
    for none."""
    jar = answer.session.cookies  # type: ignore[attr-defined]
    key = next((c.value for c in jar if c.name == "contrastlab_session"), "")
    user_id = SessionStore(session_key=key).get("_auth_user_id") if key else None
    return User.objects.get(pk=user_id).username if user_id else ""


def sign_out(page: requests.Response) -> requests.Response:
    """Click the header's "Log out" on `page` (a POST with its CSRF token, in the page's
    `.session`), following every redirect and refresh: the last answer, with the session on
    `.session`, and every redirect's and refresh's answer in `.history`."""
    session = page.session  # type: ignore[attr-defined]
    assert 'action="/accounts/logout/"' in page.text, page.url
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert token is not None
    logout = urljoin(page.url, "/accounts/logout/")
    answer = session.post(logout, data={"csrfmiddlewaretoken": token[1]}, timeout=30)
    history = [*answer.history]
    while refresh := re.search(r'http-equiv="refresh" content="0; url=([^"]+)"', answer.text):
        history.append(answer)
        answer = session.get(urljoin(answer.url, html.unescape(refresh[1])), timeout=30)
        history.extend(answer.history)
    answer.history, answer.session = history, session  # type: ignore[attr-defined]
    return answer


def visited(answer: requests.Response, issuer: str) -> list[str]:
    """The addresses on the provider's host that the answer's redirects went through."""
    host = issuer.removesuffix("/o")
    return [step.url for step in answer.history if step.url.startswith(host)]


PROVIDER_STILL_OPEN = "You are signed out here; your Lab ID session may still be open"


def test_an_invitation_to_an_address_is_accepted_by_signing_in_with_it(site):  # type: ignore[no-untyped-def]
    project = ProjectFactory(slug="lab", name="Lab negations")
    admin = UserFactory(username="alice")
    person = invites.parse_people("ada@lab.example, validator", [])
    invites.people_add(project=project, actor=admin, people=person, site="")
    made = User.objects.get(email="ada@lab.example")  # the account the invitation made

    answer = sign_in(site, "ada", "ada-pw", next="/p/lab/")

    assert answer.status_code == 200 and answer.url == f"{site}/p/lab/"
    assert "You joined Lab negations." in answer.text
    assert signed_in_as(answer, site) == made.username
    # The callback reloaded (or sent twice): no error for one who is signed in, on they go.
    again = answer.session.get(answer.history[-1].url, timeout=30)  # type: ignore[attr-defined]
    assert again.url == f"{site}/p/lab/" and "did not finish" not in again.text
    assert set(Membership.objects.filter(user=made).values_list("role", flat=True)) == {"validator"}
    invitation = Invitation.objects.get()
    assert invitation.used_by == made and invitation.used_at is not None


def test_an_existing_account_is_matched_by_its_address_in_any_case(site):  # type: ignore[no-untyped-def]
    carol = UserFactory(username="carol", email="carol@LAB.example")

    answer = sign_in(site, "carol.k", "carol-pw")

    assert signed_in_as(answer, site) == "carol"
    assert User.objects.filter(email__iexact="carol@lab.example").count() == 1
    carol.refresh_from_db()
    assert carol.check_password("pw")  # the password stays as it was


def test_an_address_the_provider_has_not_verified_signs_nobody_in(site):  # type: ignore[no-untyped-def]
    UserFactory(username="bob", email="bob@lab.example")

    answer = sign_in(site, "bob", "bob-pw", next="/p/lab/")

    assert answer.url == f"{site}/accounts/login/?next=%2Fp%2Flab%2F"  # where he was going
    assert "Lab ID has not verified the address bob@lab.example" in answer.text
    assert signed_in_as(answer, site) == ""


def test_a_new_address_gets_a_new_account_with_no_roles_or_none_where_turned_off(  # type: ignore[no-untyped-def]
    site, settings
):
    settings.OIDC_CREATE_ACCOUNTS = False
    refused = sign_in(site, "dan", "dan-pw")
    assert "No account here has the address dan@lab.example" in refused.text
    assert not User.objects.filter(email="dan@lab.example").exists()

    settings.OIDC_CREATE_ACCOUNTS = True
    UserFactory(username="dan")  # the provider's username is taken here
    answer = sign_in(site, "dan", "dan-pw")

    made = User.objects.get(email="dan@lab.example")
    assert re.fullmatch(r"dan-[0-9a-f]{4}", made.username)
    assert signed_in_as(answer, site) == made.username
    assert not made.has_usable_password() and not Membership.objects.filter(user=made).exists()


def test_an_account_an_admin_made_with_a_password_waits_for_staff(site):  # type: ignore[no-untyped-def]
    """Its admin held its link, and may have chosen its password: the address's owner gets it
    through the provider only once staff have vouched (deleted its origin)."""
    project = ProjectFactory(slug="lab")
    admin = UserFactory(username="alice")
    person = invites.parse_people("ada, ada@lab.example, expert", [])
    invites.people_add(project=project, actor=admin, people=person, site="")
    ada = User.objects.get(username="ada")
    ada.set_password("chosen by whoever held the link")
    ada.save()

    refused = sign_in(site, "ada", "ada-pw")
    assert "was made by a project's admin, who held its link" in html.unescape(refused.text)
    assert signed_in_as(refused, site) == ""

    AccountOrigin.objects.filter(user=ada).delete()
    assert signed_in_as(sign_in(site, "ada", "ada-pw"), site) == "ada"


def test_with_passwords_for_staff_only_everyone_else_is_sent_to_the_provider(  # type: ignore[no-untyped-def]
    site, settings
):
    settings.PASSWORD_LOGIN = "staff"
    UserFactory(username="erin", email="erin@lab.example")
    UserFactory(username="root", is_staff=True)
    session = requests.Session()
    page = session.get(f"{site}/accounts/login/", timeout=30)
    assert "Sign in with Lab ID" in page.text and "Staff: sign in with a password" in page.text

    for username, allowed in (("erin", False), ("root", True)):
        session = requests.Session()
        page = session.get(f"{site}/accounts/login/", timeout=30)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert token is not None
        answer = session.post(
            f"{site}/accounts/login/",
            data={"csrfmiddlewaretoken": token[1], "username": username, "password": "pw"},
            timeout=30,
        )
        assert (answer.url != f"{site}/accounts/login/") is allowed, username
        if not allowed:
            assert "Only staff sign in with a password here" in answer.text
        api = requests.post(
            f"{site}/api/auth/token/", json={"username": username, "password": "pw"}, timeout=30
        )
        assert (api.status_code == 200) is allowed, (username, api.text)
        if not allowed:
            assert "only staff sign in with a password here" in api.text
    assert not Token.objects.filter(user__username="erin").exists()


def test_with_passwords_for_staff_only_an_invitation_sets_no_password(site, settings, client):  # type: ignore[no-untyped-def]
    settings.PASSWORD_LOGIN = "staff"
    project = ProjectFactory(slug="lab")
    person = invites.parse_people("ada@lab.example, expert", [])
    (invited,) = invites.people_add(project=project, actor=UserFactory(), people=person, site="")
    made = User.objects.get(email="ada@lab.example")

    page = client.post(
        invited["link"], {"new_password1": "a long pass 123", "new_password2": "a long pass 123"}
    )

    assert page.status_code == 200 and "Sign in with Lab ID" in page.content.decode()
    made.refresh_from_db()
    assert not made.has_usable_password()
    assert not Membership.objects.filter(user=made).exists()


def test_a_provider_that_does_not_answer_is_said_on_the_login_page(site, settings):  # type: ignore[no-untyped-def]
    settings.OIDC_ISSUER = "http://127.0.0.1:9/o"  # the discard port: nothing listens
    sso.forget_provider()

    answer = requests.get(f"{site}/accounts/sso/", timeout=30)

    assert answer.status_code == 200 and answer.url == f"{site}/accounts/login/"
    assert "Lab ID is not answering just now" in answer.text


def test_a_forged_or_stale_answer_signs_nobody_in_and_is_no_5xx(site):  # type: ignore[no-untyped-def]
    session = requests.Session()
    for query in ("code=x&state=y", "state=y", "error=access_denied&state=y", ""):
        answer = session.get(f"{site}/accounts/sso/callback/?{query}", timeout=30)
        assert answer.status_code == 200 and answer.url == f"{site}/accounts/login/", query
    # The provider's words are not ours to show: anyone can write them into a link.
    bait = "error=x&error_description=Call+the+IT+desk+and+give+your+password"
    answer = session.get(f"{site}/accounts/sso/callback/?{bait}", timeout=30)
    assert "Lab ID did not sign you in." in answer.text and "IT desk" not in answer.text
    # A password form posted with a code and a state never reaches the provider.
    UserFactory(username="erin")
    page = session.get(f"{site}/accounts/login/", timeout=30)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert token is not None
    answer = session.post(
        f"{site}/accounts/login/?code=x&state=y",
        data={"csrfmiddlewaretoken": token[1], "username": "erin", "password": "wrong"},
        timeout=30,
    )
    assert answer.status_code == 200 and "didn't match" in answer.text


def test_without_a_provider_there_is_no_button_and_no_sign_in_route(live_server, settings):  # type: ignore[no-untyped-def]
    settings.OIDC_ISSUER = ""
    page = requests.get(f"{live_server.url}/accounts/login/", timeout=30)
    assert page.status_code == 200 and "Sign in with" not in page.text
    for path in ("/accounts/sso/", "/accounts/sso/callback/?code=x&state=y"):
        assert requests.get(f"{live_server.url}{path}", timeout=30).status_code == 404


def test_with_passwords_for_staff_only_new_accounts_need_an_address_and_get_no_link(  # type: ignore[no-untyped-def]
    db, settings
):
    settings.OIDC_ISSUER, settings.OIDC_PROVIDER_NAME = "https://id.lab.example", "Lab ID"
    settings.PASSWORD_LOGIN = "staff"
    project = ProjectFactory(slug="lab")
    admin = UserFactory(username="alice")

    with pytest.raises(ImportRejected) as refused:
        people = invites.parse_people("dave, dave@lab.example\neve", ["validator"])
        invites.people_add(project=project, actor=admin, people=people, site="")
    assert [error.line for error in refused.value.errors] == [2]
    assert "eve would be a new account, which needs its own e-mail address" in str(
        refused.value.errors[0].message
    )
    assert not User.objects.filter(username__in=["dave", "eve"]).exists()  # nothing, atomic

    people = invites.parse_people("dave, dave@lab.example", ["validator"])
    (added,) = invites.people_add(project=project, actor=admin, people=people, site="")
    assert added["link"] == "" and Membership.objects.filter(user__username="dave").exists()


def test_members_who_sign_in_through_the_provider_are_not_waiting_for_a_password(db):  # type: ignore[no-untyped-def]
    project = ProjectFactory(slug="lab")
    waiting, signed_in = UserFactory(username="new"), UserFactory(username="sso")
    for user in (waiting, signed_in):
        user.set_unusable_password()
        user.save()
        Membership.objects.create(project=project, user=user, role="validator")
    User.objects.filter(pk=signed_in.pk).update(last_login=timezone.now())

    rows = members_of(project, UserFactory(username="alice"))

    assert {row["username"]: row["invited"] for row in rows} == {"new": True, "sso": False}


def test_a_provider_killed_between_its_answer_and_our_callback_is_said_and_signs_nobody_in(  # type: ignore[no-untyped-def]
    site, settings, tmp_path
):
    """The browser holds the provider's code; the provider dies before we exchange it."""
    with provider(tmp_path, site, PEOPLE) as second:
        settings.OIDC_ISSUER = second
        sso.forget_provider()
        session = requests.Session()
        url, fields = provider_form(session, site)
        credentials = {**fields, "username": "ada", "password": "ada-pw"}
        answer = session.post(url, data=credentials, allow_redirects=False, timeout=30)
        while answer.is_redirect and "/accounts/sso/callback/" not in answer.headers["location"]:
            following = urljoin(answer.url, answer.headers["location"])
            answer = session.get(following, allow_redirects=False, timeout=30)
        callback = answer.headers["location"]
    # The provider's process is ended here, its code in hand.
    back = session.get(callback, timeout=30)

    assert back.status_code == 200 and back.url == f"{site}/accounts/login/"
    assert "Signing in with Lab ID did not finish: start again." in back.text
    assert not User.objects.filter(email="ada@lab.example").exists()


def test_signing_out_ends_the_providers_session_too(site, issuer):  # type: ignore[no-untyped-def]
    """On a shared computer, the next "Sign in with Lab ID" asks for a password again: our
    sign-out sends the browser to the provider's end_session_endpoint (OpenID Connect
    RP-Initiated Logout 1.0), which sends it back to our login page."""
    answer = sign_in(site, "ada", "ada-pw")
    assert signed_in_as(answer, site) == "ada"

    out = sign_out(answer)

    assert out.status_code == 200 and out.url == f"{site}/accounts/login/"
    assert signed_in_as(out, site) == "" and PROVIDER_STILL_OPEN not in out.text
    provider_form(out.session, site)  # type: ignore[attr-defined]  # the provider's form, not ada signed straight back in
    (end_session,) = visited(out, issuer)
    query = parse_qs(urlsplit(end_session).query)
    assert query["client_id"] == [CLIENT_ID]
    assert query["post_logout_redirect_uri"] == [f"{site}/accounts/login/"]
    (hint,) = query["id_token_hint"]  # the ID token of ada's sign-in
    claims = json.loads(base64.urlsafe_b64decode(hint.split(".")[1] + "=="))
    assert claims["iss"] == issuer and claims["aud"] == CLIENT_ID


def password_sign_in(session: requests.Session, site: str, username: str) -> requests.Response:
    """Sign in on our login page with the factories' password: the last answer, with the
    session on `.session`."""
    page = session.get(f"{site}/accounts/login/", timeout=30)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert token is not None
    credentials = {"csrfmiddlewaretoken": token[1], "username": username, "password": "pw"}
    answer = session.post(f"{site}/accounts/login/", data=credentials, timeout=30)
    answer.session = session  # type: ignore[attr-defined]
    assert signed_in_as(answer, site) == username
    return answer


def test_a_password_users_sign_out_does_not_go_to_the_provider(site, issuer):  # type: ignore[no-untyped-def]
    """Not even after a sign-in through the provider that was refused in the same browser."""
    UserFactory(username="erin", email="erin@lab.example")
    UserFactory(username="bob", email="bob@lab.example")
    refused = sign_in(site, "bob", "bob-pw")  # his address is not verified
    assert signed_in_as(refused, site) == ""
    answer = password_sign_in(refused.session, site, "erin")  # type: ignore[attr-defined]

    out = sign_out(answer)

    assert out.status_code == 200 and out.url == f"{site}/accounts/login/"
    assert visited(out, issuer) == [] and PROVIDER_STILL_OPEN not in out.text
    assert signed_in_as(out, site) == ""


def test_signing_in_through_the_provider_over_a_password_session_signs_out_of_both(  # type: ignore[no-untyped-def]
    site, issuer
):
    """Django's login() empties a session that was another account's: the ID token stays."""
    UserFactory(username="erin", email="erin@lab.example")
    session = password_sign_in(requests.Session(), site, "erin").session  # type: ignore[attr-defined]
    url, fields = provider_form(session, site)
    answer = session.post(url, data={**fields, "username": "ada", "password": "ada-pw"}, timeout=30)
    answer.session = session  # type: ignore[attr-defined]
    assert signed_in_as(answer, site) == "ada"

    out = sign_out(answer)

    assert out.url == f"{site}/accounts/login/" and len(visited(out, issuer)) == 1
    provider_form(session, site)


def test_a_provider_without_sign_out_or_down_is_a_plain_sign_out_that_says_so(  # type: ignore[no-untyped-def]
    site, settings, tmp_path
):
    with provider(tmp_path, site, PEOPLE, logout=False) as second:
        settings.OIDC_ISSUER = second
        sso.forget_provider()
        answer = sign_in(site, "ada", "ada-pw")
        assert signed_in_as(answer, site) == "ada"

        out = sign_out(answer)

        assert out.status_code == 200 and out.url == f"{site}/accounts/login/"
        assert visited(out, second) == [] and PROVIDER_STILL_OPEN in out.text
        assert signed_in_as(out, site) == ""
        answer = sign_in(site, "ada", "ada-pw")
    sso.forget_provider()  # its process is ended here: its discovery document is not read

    out = sign_out(answer)

    assert out.status_code == 200 and out.url == f"{site}/accounts/login/"
    assert PROVIDER_STILL_OPEN in out.text and signed_in_as(out, site) == ""
