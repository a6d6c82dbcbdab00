"""Registering a served model, hardened (docs/security.md): malformed addresses and keys are
400s with reasons; the host check refuses the IPv6 forms that embed an internal IPv4 address;
the web process's proxy and .netrc do not apply; trust is recorded at registration, so that
deleting the user who registered a model does not make it trusted."""

import json

import pytest

from evaluation.models import ModelSpec
from evaluation.runs.execute import run_evaluation
from tests.evaluation.hostile import MODEL, HostileServer
from tests.evaluation.runs.test_served import start
from tests.evaluation.served import CountingProxy
from tests.factories import member


@pytest.fixture
def server():  # type: ignore[no-untyped-def]
    honest = HostileServer("json", {"choices": [{"text": "positive"}]})
    front = CountingProxy(honest.url.removesuffix("/v1"))
    yield front
    front.close()
    honest.close()


def served(project, base_url, **extra):  # type: ignore[no-untyped-def]
    return {"project": project.slug, "name": "m", "kind": "openai-compatible", "source": MODEL,
            "base_url": base_url, **extra}  # fmt: skip


@pytest.mark.parametrize(
    "base_url",
    ["http://[127.0.0.1]:8000/v1", "http://[::1:8000/v1", "http://a]b:8000/v1",
     "http://host:99999/v1", "http://host:port/v1", "http://[::1]:-1/v1"],
)  # fmt: skip
def test_a_malformed_base_url_is_a_400_with_its_reason(sentiment, base_url):
    project, _, root = sentiment
    answer = root.post("/api/models/", served(project, base_url), format="json")
    assert answer.status_code == 400, answer.content
    assert "base_url" in json.dumps(answer.json())


@pytest.mark.parametrize("key", ["sk-é-key", "sk key", "sk-\n-key", "ключ"])
def test_a_key_that_no_header_can_carry_is_a_400(sentiment, server, key):
    project, _, root = sentiment
    answer = root.post("/api/models/", served(project, f"{server.url}/v1", api_key=key),
                       format="json")  # fmt: skip
    assert answer.status_code == 400, answer.content
    assert "api_key" in json.dumps(answer.json())
    assert not ModelSpec.objects.exists()


@pytest.mark.parametrize(
    "host", ["[64:ff9b::7f00:1]", "[64:ff9b:1::a00:1]", "[2002:7f00:1::]", "[::ffff:0:7f00:1]",
             "[fec0::1]", "[::127.0.0.1]", "[2001:0:4136:e378:8000:63bf:3fff:fdd2]"],
)  # fmt: skip
def test_an_admin_who_is_not_staff_names_no_address_that_embeds_an_internal_one(
    sentiment, client_for, host
):
    project, _, _ = sentiment
    admin = member(project, "adm", "admin")
    answer = client_for(admin).post("/api/models/", served(project, f"http://{host}:8000/v1"),
                                    format="json")  # fmt: skip
    assert answer.status_code == 403 and "internal address" in json.dumps(answer.json())


def test_the_web_process_proxy_and_netrc_do_not_apply(sentiment, server, monkeypatch, tmp_path):
    """A proxy that goes nowhere and a .netrc entry for the server: the registration still
    reaches the server itself, with no Basic credentials."""
    project, _, root = sentiment
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login someone password secret-from-netrc\n")
    netrc.chmod(0o600)
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.setenv("NETRC", str(netrc))
    answer = root.post("/api/models/", served(project, f"{server.url}/v1"), format="json")
    assert answer.status_code == 201, answer.json()
    assert server.keys == {""}  # no Authorization header: neither a key nor .netrc's


def test_a_model_stays_untrusted_after_the_admin_who_registered_it_is_deleted(
    sentiment, client_for, server, settings
):
    project, release, root = sentiment
    admin = member(project, "adm", "admin")
    settings.SERVED_MODEL_HOSTS = ["127.0.0.1"]
    created = client_for(admin).post("/api/models/", served(project, f"{server.url}/v1"),
                                     format="json")  # fmt: skip
    assert created.status_code == 201, created.json()
    admin.delete()
    settings.SERVED_MODEL_HOSTS = ["*"]  # the operator took the host back
    run = run_evaluation(start(root, release, created.json()["id"]))
    assert run.status == "failed" and "internal address" in run.error, run.error
