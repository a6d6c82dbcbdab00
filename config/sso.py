"""Signing in: passwords, and single sign-on through an OpenID Connect provider.

The provider is named by its issuer alone (OIDC_ISSUER, with a client id and secret): its
endpoints are read from its discovery document when someone first signs in through it, not at
start-up, so that a provider that is down stops no process. mozilla-django-oidc runs the
authorization-code flow (with PKCE and a nonce) and checks the ID token's signature against
the provider's keys; this module says which account a sign-in is.

An account is matched by the address the provider has verified (`email_verified`), in any
case, and only when exactly one account has it. Every pending invitation to that address is
accepted by signing in. An account that a project's admin made on the Members page, and which
has a password, may be that admin's (they held its link: models.AccountOrigin); it is matched
only once staff have vouched for it. With PASSWORD_LOGIN=staff, only staff sign in with a
password (docs/security.md, "Single sign-on").

Signing out of a session begun through the provider signs out of the provider too, where its
discovery document names an `end_session_endpoint` (OpenID Connect RP-Initiated Logout 1.0):
on a shared computer, the next person's "Sign in with …" must not find the last one's session.
"""

import logging
import time
from typing import Any
from urllib.parse import urlencode

import requests
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth import views as auth_views
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import SuspiciousOperation
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render, resolve_url
from django.urls import reverse
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from annotation.errors import DomainError
from annotation.models import AccountOrigin, Invitation, Participant
from annotation.projects.services import invites

logger = logging.getLogger(__name__)
User = get_user_model()
ID_TOKEN = "oidc_id_token"  # where mozilla-django-oidc keeps it (OIDC_STORE_ID_TOKEN)


def enabled() -> bool:
    return bool(settings.OIDC_ISSUER)


def passwords_for_everyone() -> bool:
    return settings.PASSWORD_LOGIN == "everyone"


class ProviderUnreachable(Exception):
    pass


# The discovery document's life here: long enough for one sign-in's calls, short enough that
# a provider that stopped answering is said on the login page at the next click.
DISCOVERY_SECONDS = 60
_documents: dict[str, tuple[float, dict[str, str]]] = {}


def _discovered(issuer: str) -> dict[str, str]:
    """The provider's endpoints, from its discovery document (OpenID Connect Discovery 1.0,
    section 4), kept for DISCOVERY_SECONDS; a failure is not kept."""
    read_at, document = _documents.get(issuer, (0.0, {}))
    if time.monotonic() - read_at < DISCOVERY_SECONDS:
        return document
    url = f"{issuer}/.well-known/openid-configuration"
    try:
        answer = requests.get(url, timeout=settings.OIDC_TIMEOUT, allow_redirects=False)
        answer.raise_for_status()
        found = answer.json()
    except (requests.RequestException, ValueError) as error:
        raise ProviderUnreachable(
            f"{url} did not answer with its configuration ({error})."
        ) from None
    if found.get("issuer", "").rstrip("/") != issuer:
        raise ProviderUnreachable(
            f"{url} names the issuer {found.get('issuer')!r}, not {issuer!r}."
        )
    keys = ("authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri")
    missing = [key for key in keys if not found.get(key)]
    if missing:
        raise ProviderUnreachable(f"{url} names no {', '.join(missing)}.")
    document = {key: found[key] for key in (*keys, "end_session_endpoint") if found.get(key)}
    _documents[issuer] = (time.monotonic(), document)
    return document


def forget_provider() -> None:
    """Read the discovery document again at the next sign-in (tests, a changed issuer)."""
    _documents.clear()


def endpoint(key: str) -> str:
    return _discovered(settings.OIDC_ISSUER)[key]


def sign_out_endpoint() -> str:
    """The provider's end_session_endpoint; "" where it names none."""
    return _discovered(settings.OIDC_ISSUER).get("end_session_endpoint", "")


class PasswordBackend(ModelBackend):
    """Django's username and password, for everyone or (PASSWORD_LOGIN=staff) for staff
    alone: the login page, the admin's and the API's token alike."""

    def authenticate(self, request: Any, username: Any = None, password: Any = None, **kw: Any):  # type: ignore[no-untyped-def]
        user = super().authenticate(request, username=username, password=password, **kw)
        if user is not None and not (passwords_for_everyone() or user.is_staff):
            return None
        return user


class SignInRefused(Exception):
    """Why a sign-in through the provider found no account, in words for the login page."""


class SingleSignOnBackend(OIDCAuthenticationBackend):
    def __init__(self) -> None:
        # The library reads every endpoint here; they are read when used instead (below), so
        # that a password login never waits on the provider.
        self.UserModel = User
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        self.OIDC_RP_CLIENT_SECRET = settings.OIDC_RP_CLIENT_SECRET
        self.OIDC_RP_SIGN_ALGO = settings.OIDC_RP_SIGN_ALGO
        self.OIDC_RP_IDP_SIGN_KEY = None

    @property
    def OIDC_OP_TOKEN_ENDPOINT(self) -> str:
        return endpoint("token_endpoint")

    @property
    def OIDC_OP_USER_ENDPOINT(self) -> str:
        return endpoint("userinfo_endpoint")

    @property
    def OIDC_OP_JWKS_ENDPOINT(self) -> str:
        return endpoint("jwks_uri")

    def authenticate(self, request: Any, **credentials: Any):  # type: ignore[no-untyped-def]
        """Only the callback's sign-in (a nonce and a PKCE verifier), never a password
        login's form (whose query string could hold a `code` and a `state`)."""
        if not enabled() or set(credentials) != {"nonce", "code_verifier"}:
            return None
        return super().authenticate(request, **credentials)

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        if not claims.get("email"):
            raise SignInRefused(f"{settings.OIDC_PROVIDER_NAME} gave no e-mail address.")
        if claims.get("email_verified") is not True:
            raise SignInRefused(
                f"{settings.OIDC_PROVIDER_NAME} has not verified the address "
                f"{claims['email']}: verify it there, then sign in again."
            )
        return True

    def filter_users_by_claims(self, claims: dict[str, Any]) -> Any:
        """The account with the address, if any (no two have one: models.py's constraint)."""
        users = list(User.objects.filter(email__iexact=claims["email"]))
        if users and _held_by_its_maker(users[0]):
            raise SignInRefused(
                f"The account with the address {claims['email']} was made by a project's "
                "admin, who held its link: ask staff to confirm it is yours (the Django "
                "admin's Account origins), then sign in again."
            )
        return users

    def create_user(self, claims: dict[str, Any]) -> Any:
        if not settings.OIDC_CREATE_ACCOUNTS:
            raise SignInRefused(
                f"No account here has the address {claims['email']}: ask a project's admin "
                "to invite it."
            )
        user = User.objects.create_user(_free_username(claims), email=claims["email"])
        user.set_unusable_password()
        user.save(update_fields=["password"])
        return user

    def get_or_create_user(self, access_token: str, id_token: str, payload: Any) -> Any:
        """The account the provider's verified address names (made if none has it, where new
        accounts are allowed), with the invitations to that address accepted."""
        audience = payload.get("aud")
        if payload.get("iss", "").rstrip("/") != settings.OIDC_ISSUER or (
            self.OIDC_RP_CLIENT_ID not in (audience if isinstance(audience, list) else [audience])
        ):
            raise SignInRefused(f"{settings.OIDC_PROVIDER_NAME}'s answer was not meant for us.")
        claims = self.get_userinfo(access_token, id_token, payload)
        if claims.get("sub") != payload.get("sub"):
            raise SignInRefused(f"{settings.OIDC_PROVIDER_NAME} named two different people.")
        self.verify_claims(claims)
        with transaction.atomic():
            found = self.filter_users_by_claims(claims)
            user = found[0] if found else self.create_user(claims)
            if not user.is_active:
                raise SignInRefused(
                    f"The account with the address {claims['email']} is turned off: ask staff."
                )
            joined = _invitations_accept(user)
        for project in joined:
            messages.success(self.request, f"You joined {project}.")
        return user


def _held_by_its_maker(user: Any) -> bool:
    return AccountOrigin.objects.filter(user=user).exists() and user.has_usable_password()


def _free_username(claims: dict[str, Any]) -> str:
    """The provider's preferred username where it is a valid one, else the address's local
    part, made free (invites.free_username)."""
    base = claims.get("preferred_username") or ""
    if not invites.USERNAME_RE.match(base) or Participant.reserved_username(base):
        base = claims["email"].split("@")[0]
    if not invites.USERNAME_RE.match(base) or Participant.reserved_username(base):
        base = "user"
    return invites.free_username(base)


def _invitations_accept(user: Any) -> list[str]:
    """Accept every pending invitation to the user's (verified) address: the names of the
    projects joined."""
    pending = Invitation.objects.select_related("project").filter(
        email=user.email.lower(), used_at=None, revoked_at=None
    )
    joined = []
    for invitation in pending:
        if invitation.pending:
            try:
                invites.invitation_accept(invitation=invitation, user=user)
            except DomainError:  # accepted at the same moment elsewhere
                continue
            joined.append(invitation.project.name)
    return joined


class LoginPage(auth_views.LoginView):
    """Django's login page, with the provider's button where single sign-on is on."""

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {
            **super().get_context_data(**kwargs),
            "sso": settings.OIDC_PROVIDER_NAME if enabled() else "",
            "passwords_for_everyone": passwords_for_everyone(),
        }


def _refused(request: HttpRequest, problem: str) -> HttpResponse:
    """Back to the login page with the reason, keeping where the person was going; one who is
    signed in already (a callback reloaded, or sent twice) goes on there instead."""
    going = request.session.get("oidc_login_next") or ""
    if request.user.is_authenticated:
        return HttpResponseRedirect(going or resolve_url(settings.LOGIN_REDIRECT_URL))
    # mozilla-django-oidc keeps the ID token before our checks: a password sign-in after this
    # one would inherit it, and its sign-out would go to the provider.
    request.session.pop(ID_TOKEN, None)
    messages.error(request, problem)
    login = reverse("login")
    return HttpResponseRedirect(f"{login}?{urlencode({'next': going})}" if going else login)


def _unfinished() -> str:
    return f"Signing in with {settings.OIDC_PROVIDER_NAME} did not finish: start again."


class SignInStart(OIDCAuthenticationRequestView):
    """Sends the browser to the provider, with where to come back to (`next`)."""

    def __init__(self, **kwargs: Any) -> None:
        super(OIDCAuthenticationRequestView, self).__init__(**kwargs)
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID

    def get(self, request: HttpRequest) -> HttpResponse:
        if not enabled():
            raise Http404("Single sign-on is not configured.")
        try:
            self.OIDC_OP_AUTH_ENDPOINT = endpoint("authorization_endpoint")
        except ProviderUnreachable as error:
            logger.warning("single sign-on: %s", error)
            return _refused(request, _unreachable())
        return super().get(request)


class SignInEnd(OIDCAuthenticationCallbackView):
    """Where the provider sends the browser back: signed in, or back to the login page with
    the reason."""

    def get(self, request: HttpRequest) -> HttpResponse:
        if not enabled():
            raise Http404("Single sign-on is not configured.")
        if request.GET.get("error"):  # its description is the provider's, or anyone's: logged
            logger.info(
                "single sign-on refused: %s (%s)",
                request.GET["error"],
                request.GET.get("error_description", ""),
            )
            return _refused(request, f"{settings.OIDC_PROVIDER_NAME} did not sign you in.")
        try:
            return super().get(request)
        except SignInRefused as refusal:
            return _refused(request, str(refusal))
        except ProviderUnreachable as error:
            logger.warning("single sign-on: %s", error)
            return _refused(request, _unreachable())
        except (requests.RequestException, SuspiciousOperation, ValueError) as error:
            logger.warning("single sign-on failed: %s", error)
            return _refused(request, _unfinished())

    def login_success(self) -> HttpResponse:
        """Signed in, with the ID token kept for the sign-out (SignOut): Django's login()
        empties a session that was another account's, the token with it."""
        id_token = self.request.session.get(ID_TOKEN)
        response = super().login_success()
        if id_token:
            self.request.session[ID_TOKEN] = id_token
        return response

    def login_failure(self) -> HttpResponse:
        logger.warning(
            "single sign-on did not finish: the callback came without this browser's sign-in "
            "state (a stale or reloaded link, or a session cookie another site replaced)"
        )
        return _refused(self.request, _unfinished())


class SignOut(auth_views.LogoutView):
    """Django's sign-out (a POST, with the CSRF token), then, for a session begun through the
    provider, the provider's: a page that sends the browser to its end_session_endpoint, which
    sends it back to our login page. A page, not a redirect: our policy's `form-action 'self'`
    stops a form's redirect to another origin. Where the provider cannot be told (it names no
    such endpoint, or does not answer), the login page says its session may still be open."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        id_token = request.session.get(ID_TOKEN)
        response = super().post(request, *args, **kwargs)
        if not (id_token and enabled()):
            return response
        try:
            end_session = sign_out_endpoint()
        except ProviderUnreachable as error:
            logger.warning("single sign-on: signed out here alone: %s", error)
            end_session = ""
        name = settings.OIDC_PROVIDER_NAME
        if not end_session:
            messages.info(
                request,
                f"You are signed out here; your {name} session may still be open: sign out of "
                f"{name} too.",
            )
            return response
        query = urlencode(
            {
                "id_token_hint": id_token,
                "post_logout_redirect_uri": request.build_absolute_uri(reverse("login")),
                "client_id": settings.OIDC_RP_CLIENT_ID,
            }
        )
        end_session += f"{'&' if '?' in end_session else '?'}{query}"
        context = {"sso": name, "end_session": end_session}
        return render(request, "registration/signing_out.html", context)


def _unreachable() -> str:
    return f"{settings.OIDC_PROVIDER_NAME} is not answering just now: try again in a moment" + (
        "." if not passwords_for_everyone() else ", or sign in with your password."
    )
