"""Runs the test OpenID Connect provider (settings.py) on 127.0.0.1, on a free port, with one
confidential client and the people given, and prints its issuer once it answers.

    PROVIDER_DB=/tmp/x.sqlite3 python -m tests.sso_provider.serve '{"client_id": …,
        "client_secret": …, "redirect_uri": …, "post_logout_redirect_uri": …,
        "people": [{"username": …, "password": …, "email": …, "verified": true}]}'

PROVIDER_LOGOUT=0 leaves RP-initiated logout off (settings.py).
"""

import json
import os
import sys

os.environ["DJANGO_SETTINGS_MODULE"] = "tests.sso_provider.settings"

import django

django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from oauth2_provider.models import Application  # noqa: E402


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> None:
    config = json.loads(sys.argv[1])
    call_command("migrate", verbosity=0)
    for person in config["people"]:
        User.objects.create_user(
            person["username"],
            email=person["email"],
            password=person["password"],
            last_name="" if person.get("verified", True) else "unverified",
        )
    Application.objects.create(
        name="ContrastLab",
        client_id=config["client_id"],
        client_secret=config["client_secret"],
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=config["redirect_uri"],
        post_logout_redirect_uris=config["post_logout_redirect_uri"],
        algorithm=Application.RS256_ALGORITHM,
        skip_authorization=True,
    )
    server = ThreadedWSGIServer(("127.0.0.1", 0), QuietHandler)
    server.set_app(get_wsgi_application())
    print(f"http://127.0.0.1:{server.server_port}/o", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
