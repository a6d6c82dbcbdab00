"""Settings, deployment files, the embedded demo path, and a real Celery round trip."""

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest
import redis
import yaml
from celery import Celery

from config.celery import app as celery_app
from tests.workers import start_worker, stop, wait_for

ROOT = Path(__file__).resolve().parent.parent


def run_manage(*args: str, env: dict[str, str], timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_"))}
    env.pop("SECRET_KEY", None)
    env.pop("CELERY_BROKER_URL", None)
    return {**env, **extra}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_check_deploy_is_clean_under_production_settings(tmp_path):
    env = clean_env(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        SECRET_KEY="x" * 20 + uuid.uuid4().hex + "Y" * 20,
        CONTRASTLAB_VAR_DIR=str(tmp_path),
    )
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_is_clean_under_docker_composes_defaults(tmp_path):
    """Compose's own environment, its ${NAME:-default}s taken as written, passes `check
    --deploy` with no warning (it warned W008: no HTTPS redirect)."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    environment = compose["services"]["web"]["environment"]
    defaults = {
        name: re.sub(r"\$\{\w+:?-([^}]*)\}", r"\1", str(value))
        for name, value in environment.items()
        if name
        not in ("SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "MEDIA_ROOT")
    }
    env = clean_env(
        **defaults,
        SECRET_KEY="x" * 20 + uuid.uuid4().hex + "Y" * 20,
        CONTRASTLAB_VAR_DIR=str(tmp_path),
        MEDIA_ROOT=str(tmp_path / "media"),
    )
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_production_refuses_to_start_without_secret_key(tmp_path):
    env = clean_env(
        DJANGO_SETTINGS_MODULE="config.settings.production", CONTRASTLAB_VAR_DIR=str(tmp_path)
    )
    result = run_manage("check", env=env)
    assert result.returncode != 0
    assert "Set the SECRET_KEY environment variable" in result.stderr


def test_bad_environment_values_fail_loudly(tmp_path):
    env = clean_env(CONTRASTLAB_VAR_DIR=str(tmp_path), DEBUG="maybe")
    result = run_manage("check", env=env)
    assert result.returncode != 0
    assert "DEBUG='maybe' is not a boolean" in result.stderr


@pytest.mark.parametrize(("value", "on"), [("true", True), ("1", True), ("0", False),
                                           ("false", False), ("yes please", None)])  # fmt: skip
def test_email_tls_is_read_as_a_boolean_or_stops_start_up(tmp_path, value, on):
    """ "true" was read as off: the README promises a bad value stops start-up, and a good one
    is taken."""
    env = clean_env(CONTRASTLAB_VAR_DIR=str(tmp_path), EMAIL_USE_TLS=value)
    result = run_manage("shell", "-c", "from django.conf import settings; "
                        "print(settings.EMAIL_USE_TLS)", env=env)  # fmt: skip
    if on is None:
        assert result.returncode != 0 and f"EMAIL_USE_TLS={value!r}" in result.stderr
    else:
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip().splitlines()[-1] == str(on)


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ({"PASSWORD_LOGIN": "nobody"}, "PASSWORD_LOGIN='nobody' is not one of everyone, staff"),
        ({"PASSWORD_LOGIN": "staff"}, "PASSWORD_LOGIN=staff needs single sign-on"),
        ({"OIDC_ISSUER": "https://id.lab.example"}, "OIDC_ISSUER needs OIDC_CLIENT_ID"),
    ],
)
def test_single_sign_on_settings_that_cannot_work_stop_start_up(tmp_path, extra, said):
    result = run_manage("check", env=clean_env(CONTRASTLAB_VAR_DIR=str(tmp_path), **extra))
    assert result.returncode != 0 and said in result.stderr


def test_docker_compose_wires_the_full_stack():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert set(services) == {"postgres", "redis", "migrate", "web", "worker", "proxy"}
    assert "healthcheck" in services["postgres"] and "healthcheck" in services["redis"]
    assert services["migrate"]["command"][-2:] == ["migrate", "--noinput"]
    assert services["web"]["command"][0] == "gunicorn"
    worker = services["worker"]["command"]
    assert (
        worker[:3] == ["celery", "-A", "config"]
        and worker[worker.index("-Q") + 1] == "evaluation,imports"
    )
    for name in ("web", "worker"):
        depends = services[name]["depends_on"]
        assert depends["migrate"]["condition"] == "service_completed_successfully"
        assert depends["redis"]["condition"] == "service_healthy"
        env = services[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgres://") and "@postgres:" in env["DATABASE_URL"]
        assert env["CELERY_BROKER_URL"].startswith("redis://redis:")
        assert env["DJANGO_SETTINGS_MODULE"] == "config.settings.production"
        assert "SECRET_KEY" in env
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_compose_publishes_the_proxy_alone_and_the_app_reads_the_address_it_writes():
    """The app's port was published beside the proxy's, so that a client could reach the app
    and write X-Forwarded-For itself (dodging the login lock-out); and by default the app did
    not read the header, so that every client had the proxy's address and ten bad logins
    locked a user out for everyone."""
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    published = {name for name, service in services.items() if service.get("ports")}
    assert published == {"proxy"}
    volume = services["proxy"]["volumes"][0].split(":")
    assert volume[1] == "/etc/nginx/conf.d/default.conf"
    proxy = (ROOT / volume[0]).read_text()
    assert "server web:8000;" in proxy
    # The proxy replaces the header with the address it saw; it never appends a client's.
    assert re.search(r"^\s*proxy_set_header X-Forwarded-For \$remote_addr;", proxy, re.M)
    assert "proxy_add_x_forwarded_for" not in proxy
    environment = services["web"]["environment"]
    default = {name: re.sub(r"\$\{\w+:?-([^}]*)\}", r"\1", str(environment[name]))
               for name in ("CLIENT_ADDRESS_HEADER", "TRUSTED_PROXY_COUNT")}  # fmt: skip
    assert default == {"CLIENT_ADDRESS_HEADER": "HTTP_X_FORWARDED_FOR", "TRUSTED_PROXY_COUNT": "1"}


def test_evaluation_tasks_are_routed_to_the_evaluation_queue():
    route = celery_app.amqp.router.route({}, "evaluation.tasks.ping")
    assert route["queue"].name == "evaluation"


def worker_queues() -> set[str]:
    """The queues the deployed worker reads (docker-compose.yml) and `make worker`'s."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    command = compose["services"]["worker"]["command"]
    queues = set(command[command.index("-Q") + 1].split(","))
    make = re.search(r"^worker:.*\n\t.* -Q ([\w,]+)", (ROOT / "Makefile").read_text(), re.M)
    assert make is not None
    assert set(make.group(1).split(",")) == queues
    return queues


def test_every_task_is_named_by_its_module_and_routed_to_a_queue_a_worker_reads():
    """A task left with its default name goes where its app's tasks go: none is sent to a
    queue no worker reads (a task named after a module it does not live in could be)."""
    import annotation.tasks  # noqa: F401  (what the worker's autodiscovery imports)
    import evaluation.tasks  # noqa: F401
    from config.celery import LEGACY_NAMES

    queues = worker_queues()
    ours = {name: task for name, task in celery_app.tasks.items()
            if name.startswith(("annotation.", "evaluation."))}  # fmt: skip
    assert len(ours) >= 8, sorted(ours)
    for name, task in ours.items():
        if name in LEGACY_NAMES:  # an old name, kept for messages queued before an upgrade
            assert task is celery_app.tasks[LEGACY_NAMES[name]]
        else:
            assert name == f"{task.run.__module__}.{task.run.__name__}", name
        queue = celery_app.amqp.router.route({}, name)["queue"].name
        assert queue in queues, (name, queue)
        assert queue == ("evaluation" if name.startswith("evaluation.") else "imports")


def test_the_beats_periodic_tasks_are_ours_and_the_deployed_worker_runs_the_beat():
    """The notifications' digests are sent by a beat (CELERY_BEAT_SCHEDULE): each scheduled
    task is one the worker has, routed to a queue it reads, and the worker that docker compose
    and `make worker` start runs the beat (one worker: one beat)."""
    from django.conf import settings

    import annotation.tasks  # noqa: F401

    schedule = celery_app.conf.beat_schedule
    assert schedule == settings.CELERY_BEAT_SCHEDULE and schedule
    assert "annotation.notifications.tasks.send_digests_task" in {
        entry["task"] for entry in schedule.values()
    }
    for entry in schedule.values():
        assert entry["task"] in celery_app.tasks
        assert celery_app.amqp.router.route({}, entry["task"])["queue"].name in worker_queues()
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert "--beat" in compose["services"]["worker"]["command"]
    make = re.search(r"^worker:.*\n\t(.*)", (ROOT / "Makefile").read_text(), re.M)
    assert make is not None and "--beat" in make.group(1)


@pytest.mark.slow
def test_embedded_demo_path_on_sqlite_migrates_loads_twice_and_serves_login(tmp_path):
    env = clean_env(CONTRASTLAB_VAR_DIR=str(tmp_path))
    assert run_manage("migrate", "--noinput", env=env).returncode == 0
    first = run_manage("load_demo", env=env)
    second = run_manage("load_demo", env=env)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert "(40 originals)" in first.stdout and "(40 originals)" in second.stdout
    assert "password for all: contrast-demo" in second.stdout
    runs = re.findall(
        r"Demo evaluation run #(\d+): (Keyword [\w ]+) on release demo-1", first.stdout
    )
    assert [name for _, name in runs] == ["Keyword baseline", "Keyword with negation"]
    assert all(f"run #{pk}:" in second.stdout for pk, _ in runs)  # each scored once
    assert (tmp_path / "contrastlab.sqlite3").exists()

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:

        def login_page() -> bytes | None:
            try:
                return urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/").read()
            except OSError:
                return None

        wait_for(lambda: login_page() is not None, 60, "the demo server")
        assert b"Log in" in login_page()  # type: ignore[operator]
    finally:
        stop(server)


@pytest.mark.slow
def test_embedded_worker_runs_tasks_from_the_filesystem_broker(tmp_path):
    env = clean_env(CONTRASTLAB_VAR_DIR=str(tmp_path))
    worker = start_worker(env)
    token = uuid.uuid4().hex
    try:
        code = (
            "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', "
            "'config.settings.local'); django.setup();"
            f"from evaluation.tasks import ping; ping.delay('{token}')"
        )
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True, timeout=60)
        queue = tmp_path / "broker" / "queue"
        wait_for(lambda: not any(queue.iterdir()), 60, "the worker to take the message")
        time.sleep(1)
    finally:
        log = stop(worker)
    assert re.search(rf"succeeded in .*'pong:{token}'", log), log[-2000:]


@pytest.mark.slow
def test_celery_round_trip_through_a_real_worker_on_redis(tmp_path):
    """A ping through a worker. The tests' broker is emptied first: it may hold the messages
    of jobs that earlier tests queued, on a database this worker does not have."""
    # Celery lets the CELERY_BROKER_URL variable (set for the tests) override broker=.
    redis_url = os.environ["CELERY_BROKER_URL"]
    redis.Redis.from_url(redis_url).flushdb()
    env = clean_env(
        CONTRASTLAB_VAR_DIR=str(tmp_path),
        CELERY_BROKER_URL=redis_url,
        CELERY_RESULT_BACKEND=redis_url,
    )
    log = tmp_path / "worker.log"
    worker = start_worker(env, log)
    client = Celery(broker=redis_url, backend=redis_url)
    try:
        token = uuid.uuid4().hex
        result = client.send_task("evaluation.tasks.ping", args=[token], queue="evaluation")
        try:
            answer = result.get(timeout=90)
        except Exception:
            raise AssertionError(log.read_text()) from None
        assert answer == f"pong:{token}"
    finally:
        stop(worker)
        client.close()


def test_invitation_links_are_not_printed_to_the_logs_by_default(tmp_path):
    """The console backend wrote every set-password link into the web log."""
    env = clean_env(CONTRASTLAB_VAR_DIR=str(tmp_path))
    env.pop("EMAIL_BACKEND", None)
    code = "from django.conf import settings; print(settings.EMAIL_BACKEND)"
    shown = run_manage("shell", "--no-imports", "-c", code, env=env)
    assert shown.stdout.strip().splitlines()[-1] == (
        "django.core.mail.backends.dummy.EmailBackend"
    ), shown.stderr
