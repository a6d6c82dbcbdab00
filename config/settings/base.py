"""Settings shared by every environment. Everything configurable comes from config.env."""

from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.env import envbool, envchoice, envint, envints, envlist, envstr

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(envstr("CONTRASTLAB_VAR_DIR", str(BASE_DIR / "var")))

ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "127.0.0.1,localhost")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "annotation",
    "evaluation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "config.edge.EdgeMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # A crowd participant's session reaches their project's validation pages alone.
    "annotation.crowd.scope.ParticipantScope",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",
    "config.edge.ContentSecurityPolicyMiddleware",
]

# Every page's scripts and styles come from our own static files: no inline script, no eval.
# Inline style *attributes* stay allowed (bar widths, the confusion matrix's shades), as CSP
# level 3's style-src-attr lets them without allowing <style> elements (docs/security.md).
CONTENT_SECURITY_POLICY = envstr(
    "CONTENT_SECURITY_POLICY",
    "default-src 'self'; script-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'; "
    "img-src 'self' data: https:; font-src 'self'; connect-src 'self'; object-src 'none'; "
    "base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Login throttling (django-axes): a username is locked out from an address after
# LOGIN_FAILURE_LIMIT failed logins in a row, for LOGIN_COOLOFF_MINUTES.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "config.sso.PasswordBackend",
    "config.sso.SingleSignOnBackend",
]
AXES_FAILURE_LIMIT = envint("LOGIN_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = timedelta(minutes=envint("LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
# Behind a proxy, the client's address is in a header the proxy sets (e.g. HTTP_X_FORWARDED_FOR
# with one trusted proxy); unset, the connection's address is the client's.
CLIENT_ADDRESS_HEADER = envstr("CLIENT_ADDRESS_HEADER", "")
TRUSTED_PROXY_COUNT = envint("TRUSTED_PROXY_COUNT", 1)
AXES_CLIENT_IP_CALLABLE = "config.edge.client_address"
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        envstr("DATABASE_URL", f"sqlite:///{VAR_DIR / 'contrastlab.sqlite3'}"),
        conn_max_age=envint("DATABASE_CONN_MAX_AGE", 0),
    )
}
# The hot path's statements are PREPAREd once per connection (annotation/sql.py). Behind a
# pooler in transaction mode (PgBouncer's pool_mode=transaction), one client connection runs on
# many server connections, which do not share prepared statements: set 0 there.
DATABASE_PREPARED_STATEMENTS = envbool("DATABASE_PREPARED_STATEMENTS", True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
MEDIA_ROOT = Path(envstr("MEDIA_ROOT", str(VAR_DIR / "media")))
# Uploads over FILE_UPLOAD_MAX_MEMORY_SIZE are received here, beside the files imports keep: a
# web process killed mid-upload leaves its part here, swept after a day (imports/preview.py).
FILE_UPLOAD_TEMP_DIR = MEDIA_ROOT / "uploading"
FILE_UPLOAD_TEMP_DIR.mkdir(parents=True, exist_ok=True)
MEDIA_URL = "media/"

# Cookies of our own names: a sign-in provider on the same host (another port) sets Django's
# default "sessionid" and "csrftoken", which browsers share across ports, and would end ours.
SESSION_COOKIE_NAME = "contrastlab_session"
CSRF_COOKIE_NAME = "contrastlab_csrftoken"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "project-start"  # where each role starts (README)
LOGOUT_REDIRECT_URL = "login"
# Single sign-on with an OpenID Connect provider (config/sso.py; README, "Single sign-on"):
# on once OIDC_ISSUER is set, its endpoints read from the issuer's discovery document.
OIDC_ISSUER = envstr("OIDC_ISSUER", "").rstrip("/")
OIDC_RP_CLIENT_ID = envstr("OIDC_CLIENT_ID", "")
OIDC_RP_CLIENT_SECRET = envstr("OIDC_CLIENT_SECRET", "")
OIDC_PROVIDER_NAME = envstr("OIDC_PROVIDER_NAME", "single sign-on")  # "Sign in with …"
# Whether a verified address that no account has gets a new account (with no roles).
OIDC_CREATE_ACCOUNTS = envbool("OIDC_CREATE_ACCOUNTS", True)
OIDC_RP_SIGN_ALGO = envstr("OIDC_SIGN_ALGO", "RS256")
OIDC_RP_SCOPES = "openid email profile"
OIDC_USE_PKCE = True
OIDC_STORE_ID_TOKEN = True  # the sign-out's id_token_hint, for the provider (config/sso.py)
OIDC_TIMEOUT = envint("OIDC_TIMEOUT_SECONDS", 10)
OIDC_AUTHENTICATION_CALLBACK_URL = "sso-callback"
# "staff": only staff sign in with a password (the rest through the provider); "everyone".
PASSWORD_LOGIN = envchoice("PASSWORD_LOGIN", "everyone", ("everyone", "staff"))
if OIDC_ISSUER and not (OIDC_RP_CLIENT_ID and OIDC_RP_CLIENT_SECRET):
    raise ImproperlyConfigured("OIDC_ISSUER needs OIDC_CLIENT_ID and OIDC_CLIENT_SECRET.")
if PASSWORD_LOGIN == "staff" and not OIDC_ISSUER:
    raise ImproperlyConfigured("PASSWORD_LOGIN=staff needs single sign-on (set OIDC_ISSUER).")
# Invitations carry a set-password link: sent by SMTP once configured
# (EMAIL_BACKEND=django.core.mail.backends.smtp.EmailBackend, with Django's EMAIL_HOST,
# EMAIL_PORT, EMAIL_HOST_USER, EMAIL_HOST_PASSWORD, EMAIL_USE_TLS); until then, dropped: the
# admin who added the people sees every link once, and a link printed by the console backend
# would sit in the web and worker logs (set that backend explicitly to want it).
EMAIL_BACKEND = envstr("EMAIL_BACKEND", "django.core.mail.backends.dummy.EmailBackend")
EMAIL_HOST = envstr("EMAIL_HOST", "localhost")
EMAIL_PORT = envint("EMAIL_PORT", 25)
EMAIL_HOST_USER = envstr("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = envstr("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = envstr("DEFAULT_FROM_EMAIL", "contrastlab@localhost")
# The scheme and host the notifications' e-mailed digests start their links with
# (e.g. https://contrast.example.org); without it they give paths alone.
SITE_URL = envstr("SITE_URL", "")

# Throttling counts live here: in each process by default; set CACHE_URL (redis://…) so that
# every web process shares them.
CACHE_URL = envstr("CACHE_URL", "")
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
        if CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first, so that anonymous API calls get 401 with a WWW-Authenticate header.
        "config.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": [
        "config.edge.StrictJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # `?format=zip` selects a release bundle's format, not a DRF renderer.
    "URL_FORMAT_OVERRIDE": None,
    # Domain errors (annotation.errors) become responses here, and only here.
    "EXCEPTION_HANDLER": "annotation.errors.api_exception_handler",
    # Requests per client: anonymous ones by address, signed-in ones (token or session) by
    # user; failed token checks by address, in config.auth (docs/api.md, "Throttling").
    "DEFAULT_THROTTLE_CLASSES": ["config.auth.AnonThrottle", "config.auth.UserThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "anon": envstr("API_THROTTLE_ANON", "120/minute"),
        "user": envstr("API_THROTTLE_USER", "3000/minute"),
        "bad_token": envstr("API_THROTTLE_BAD_TOKEN", "30/minute"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "ContrastLab API",
    "DESCRIPTION": "Build, validate, release and evaluate NLP contrast sets.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Request bodies get their own components, so that a non-blank field says minLength: 1.
    "COMPONENT_SPLIT_REQUEST": True,
    # Every operation's error answers (401/403/404/429; 400/409 for writes; 413/415 for uploads)
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "annotation.errors.error_answers",
    ],
    # Vendored Swagger UI: the pages must work offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "ModelKindEnum": "evaluation.runs.kinds.KIND_CHOICES",
        "AnalysisKindEnum": "evaluation.models.Analysis.Kind",
        "JobStatusEnum": "evaluation.models.EvaluationRun.Status",
        "WithdrawnStatusEnum": [("withdrawn", "withdrawn")],  # a perturbation's PATCH
        "NotificationKindEnum": "annotation.models.notifications.KIND_CHOICES",
    },
}

# Import limits (docs/workflows.md). Each one produces its own clear error.
IMPORT_MAX_BYTES = envint("IMPORT_MAX_BYTES", 50 * 1024 * 1024)
IMPORT_MAX_FIELD_CHARS = envint("IMPORT_MAX_FIELD_CHARS", 20_000)
IMPORT_MAX_ROWS = envint("IMPORT_MAX_ROWS", 500_000)
# Uploads larger than this (all files together), or with more lines, are imported on a worker,
# not in the request.
IMPORT_BACKGROUND_BYTES = envint("IMPORT_BACKGROUND_BYTES", 5 * 1024 * 1024)
IMPORT_BACKGROUND_LINES = envint("IMPORT_BACKGROUND_LINES", 20_000)
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

# Celery. The embedded default is kombu's filesystem transport, so a separate worker process
# runs with no broker server; the full stack sets CELERY_BROKER_URL=redis://...
BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_URL = envstr("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    for sub in ("queue", "processed", "control"):
        (BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "control_folder": str(BROKER_DIR / "control"),  # kombu's default is ./control
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "store_processed": False,
    }
else:
    # A message whose worker died is redelivered after this many seconds. A run that takes
    # longer is not run twice: see annotation.jobs.RunBusy.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": envint("CELERY_VISIBILITY_TIMEOUT", 3600),
        "unacked_restore_interval": envint("CELERY_RESTORE_INTERVAL", 10),
        "unacked_restore_throttle": 1,
    }
# Results live in our own models; a backend is only configured when asked for.
CELERY_RESULT_BACKEND = envstr("CELERY_RESULT_BACKEND", "") or None
# Tasks are named by their modules (Celery's default): every task of an app goes to its queue,
# whichever of its folders it lives in (tests/test_config.py checks that a worker reads each).
CELERY_TASK_ROUTES = {
    "evaluation.*": {"queue": "evaluation"},
    "annotation.*": {"queue": "imports"},
}
# The periodic tasks, sent by a beat (`celery -A config worker -B`, or `celery -A config beat`):
# the notifications' e-mailed digests, every DIGEST_CHECK_SECONDS (each user gets one an hour
# at most).
CELERY_BEAT_SCHEDULE = {
    "notification-digests": {
        "task": "annotation.notifications.tasks.send_digests_task",
        "schedule": envint("DIGEST_CHECK_SECONDS", 300),
    },
}
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A running job (import, run, analysis) whose heartbeat is older than this lost its worker and
# is taken over (annotation.jobs); after JOB_MAX_ATTEMPTS starts it fails with the reason.
EVALUATION_STALE_SECONDS = envint("EVALUATION_STALE_SECONDS", 120)
JOB_MAX_ATTEMPTS = envint("JOB_MAX_ATTEMPTS", 3)
# A prompted model's context for one example (shots included), in characters: a run whose
# prompt is longer fails with the example's id rather than tokenise megabytes on a worker.
PROMPT_MAX_CHARS = envint("PROMPT_MAX_CHARS", 200_000)
# Staff may register models from local folders under this one only (see README, Security model).
MODELS_DIR = Path(envstr("MODELS_DIR", str(VAR_DIR / "models")))
# Served models (docs/models.md). The hosts a project admin who is not staff may name in a
# served model's base URL: "*" is any host whose addresses are all public (no loopback,
# private, link-local or reserved address: the workers' own network stays out of reach);
# other entries are host names (or "*.example.org") allowed whatever they resolve to. Staff
# may name any host. The API keys are encrypted under MODEL_KEYS_SECRET (SECRET_KEY if unset).
SERVED_MODEL_HOSTS = envlist("SERVED_MODEL_HOSTS", "*")
MODEL_KEYS_SECRET = envstr("MODEL_KEYS_SECRET", "")
# A request that fails with a connection error, a timeout, 429 or 5xx is tried again after
# 1, 2, 4 ... seconds (at most SERVED_MODEL_BACKOFF_MAX), SERVED_MODEL_RETRIES times.
# New participants a study link makes (docs/security.md, "Crowd participants"): at most this
# many an hour from one client address, and this many a minute into one study (counted in the
# cache, like the API's throttles).
STUDY_NEW_PARTICIPANTS_PER_ADDRESS_HOUR = envint("STUDY_NEW_PARTICIPANTS_PER_ADDRESS_HOUR", 10)
STUDY_NEW_PARTICIPANTS_PER_STUDY_MINUTE = envint("STUDY_NEW_PARTICIPANTS_PER_STUDY_MINUTE", 60)
SERVED_MODEL_RETRIES = envint("SERVED_MODEL_RETRIES", 8)
SERVED_MODEL_BACKOFF_MAX = envint("SERVED_MODEL_BACKOFF_MAX", 30)
# The most bytes read of one answer of a model server (a run's, the registration's, the
# Check's): a larger answer fails its request, whatever the server says it will send.
SERVED_MODEL_MAX_ANSWER_BYTES = envint("SERVED_MODEL_MAX_ANSWER_BYTES", 8_000_000)
# Webhooks (README, "Webhooks"): the hosts a project admin who is not staff may send them to,
# read as SERVED_MODEL_HOSTS is; each delivery's deadline (seconds) and the most bytes read of
# its answer; the seconds before each retry of a failed delivery (one try more than delays).
WEBHOOK_HOSTS = envlist("WEBHOOK_HOSTS", "*")
WEBHOOK_TIMEOUT = envint("WEBHOOK_TIMEOUT", 10)
WEBHOOK_MAX_ANSWER_BYTES = envint("WEBHOOK_MAX_ANSWER_BYTES", 65_536)
WEBHOOK_RETRY_DELAYS = envints("WEBHOOK_RETRY_DELAYS", "10,60,300,1800")
# Model scoring can hold a large model; recycle the child process before memory creeps.
CELERY_WORKER_MAX_MEMORY_PER_CHILD = envint("CELERY_WORKER_MAX_MEMORY_KB", 4_000_000)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
}
