"""Settings, read from the environment (see README, "Configuration").

The defaults run on one machine with no service: SQLite in `var/`, a Celery
broker in the file system, and no LLM endpoint. DATABASE_URL, CELERY_BROKER_URL
and the LLM_* variables switch to PostgreSQL, Redis or RabbitMQ, and any
OpenAI-compatible server.
"""

from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from assessor.project.env import env_bool, env_float, env_int, env_int_or_off, env_list, env_str, env_url
from assessor.project.llm_endpoints import EndpointsFileInvalid, endpoints_file_read
from assessor.project.security import owner_only_file, owner_only_folder, secret_key_file_read
from project_apps import PROJECT_APPS

BASE_DIR = Path(__file__).resolve().parents[2]
VAR_DIR = Path(env_str("ASSESSOR_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG and env_bool("ASSESSOR_REQUIRE_SECRET_KEY", False):
        raise ImproperlyConfigured("SECRET_KEY must be set when ASSESSOR_REQUIRE_SECRET_KEY is on")
    # A per-checkout key, so that a local demo works without configuration
    # while no two installations share one.
    SECRET_KEY = secret_key_file_read(VAR_DIR / "secret_key")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "axes",
    "assessor",
    # The apps, listed once outside the foundation (project_apps.py).
    *PROJECT_APPS,
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files with DEBUG off, from the one web process (README, "Deployment").
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Before anything reads the request: a NUL in it is a 400, not a database error.
    "assessor.project.nul.NulRefusalMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    # Django's, the user and their role read in one query (as the session's row, SESSION_ENGINE below).
    "assessor.site.sessions.UserMiddleware",
    # A page under /c/<slug>/ is served inside that campaign (its rows, its URLs), to its people only.
    "assessor.campaigns.middleware.CampaignMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "assessor.project.busy.DatabaseBusyMiddleware",
    "assessor.site.open_work.IncludeOpenWorkMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "assessor.site.urls"

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
                "assessor.work.roles.role_context",
                "assessor.site.nav.nav_context",
                "assessor.site.open_work.open_work_switch",
            ],
        },
    },
]

WSGI_APPLICATION = "assessor.project.wsgi.application"

DATABASE_URL = env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'assessor.sqlite3'}")
# Read whatever the database, so that a wrong value stops every start (used on PostgreSQL only).
DATABASE_PREPARE_THRESHOLD = env_int_or_off("DATABASE_PREPARE_THRESHOLD", 5)
try:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60)}
except Exception as exc:  # dj_database_url raises several types for a bad URL
    raise ImproperlyConfigured(f"DATABASE_URL={DATABASE_URL!r} is not a database URL: {exc}") from None
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    if DATABASES["default"]["NAME"] and DATABASES["default"]["NAME"] != ":memory:":
        owner_only_file(Path(DATABASES["default"]["NAME"]))
    # The web process and the local worker share the file: WAL lets readers
    # go on during a write, IMMEDIATE makes writers queue instead of failing.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        # How long a write waits for another to finish before giving up (see assessor.project.busy).
        "timeout": env_float("SQLITE_BUSY_TIMEOUT", 30.0, minimum=0.0),
    }
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # The statements every request and every label save run again and again (the session, the user, the save's
    # reads and writes: `assessor.work.prepared.statement_cursor`) are prepared on the server once a connection has
    # run them this many times, so that they are neither parsed nor planned again (docs/deployment.md, "Prepared
    # statements"). Django's own cursors bind on the client and are never prepared. Off: nothing is prepared.
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].setdefault("prepare_threshold", DATABASE_PREPARE_THRESHOLD)
DATABASES["default"]["TEST"] = {"NAME": env_str("TEST_DATABASE_NAME", "") or None}
# On SQLite an import reads, checks and stages its file with no write lock, and holds the lock
# only for a short switch at its end (assessor/importing/staging.py); the staged rows
# wait on disk, in IMPORT_STAGING_DIR. Off: the whole import in one transaction, as on PostgreSQL.
IMPORT_STAGING = env_bool("IMPORT_STAGING", True)
IMPORT_STAGING_DIR = Path(env_str("IMPORT_STAGING_DIR", str(VAR_DIR / "import-staging")))

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
AUTHENTICATION_BACKENDS = [
    # First: refuses a locked-out account and address before the password is checked.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
# Django's database sessions, the row read by a query written once (assessor/site/sessions.py).
SESSION_ENGINE = "assessor.site.sessions"

# --- Deployment security (README, "Deployment") ---------------------------------
# Failed logins are throttled per account and address together (django-axes):
# after LOGIN_FAILURE_LIMIT failures in a row, that account cannot log in from
# that address for LOGIN_LOCKOUT_MINUTES, not even with the right password. A
# pair, so that a stranger can neither lock an assessor out from elsewhere nor
# shut out everyone behind one address; a success clears the count.
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_float("LOGIN_LOCKOUT_MINUTES", 15.0, minimum=0.1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False

# One switch for serving over HTTPS behind a proxy that terminates TLS and sets
# X-Forwarded-Proto and X-Forwarded-For: secure cookies, HSTS, the redirect from
# plain HTTP, and the proxy's word for the scheme and the client's address.
HTTPS = env_bool("ASSESSOR_HTTPS", False)
if HTTPS:
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("ASSESSOR_HSTS_SECONDS", 31_536_000, minimum=1)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    AXES_CLIENT_IP_CALLABLE = "assessor.project.security.client_address_behind_proxy"
    # Probes from inside the network ask over plain HTTP; a redirect would fail them.
    SECURE_REDIRECT_EXEMPT = [r"^health/$"]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# `manage.py collectstatic` (bin/serve runs it) copies the files here; WhiteNoise serves them.
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # collectstatic also writes a gzipped copy of each file, which WhiteNoise sends to clients that accept it.
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# An uploaded file is kept on disk until a worker imports it (assessor/collection/uploads.py).
# Past FILE_UPLOAD_MAX_MEMORY_SIZE, Django streams an upload into a file in
# FILE_UPLOAD_TEMP_DIR in 64 KiB chunks: a file of any size never sits whole in
# the web process's memory. That folder is inside UPLOAD_DIR, so that keeping
# the file is a rename, not a copy. A worker on another machine needs UPLOAD_DIR
# too (shared storage).
UPLOAD_DIR = Path(env_str("UPLOAD_DIR", str(VAR_DIR / "uploads")))
FILE_UPLOAD_TEMP_DIR = str(UPLOAD_DIR / "incoming")
owner_only_folder(UPLOAD_DIR)
owner_only_folder(Path(FILE_UPLOAD_TEMP_DIR))
# A running upload that shows no sign of life (a progress report) for this long
# may be taken back and retried: its worker was most likely stopped mid-import.
UPLOAD_STALL_MINUTES = env_int("UPLOAD_STALL_MINUTES", 15, minimum=1)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
DATA_UPLOAD_MAX_MEMORY_SIZE = 10_485_760

# A gap between two actions of an assessor longer than this (seconds) is time
# away from the topic and does not count as active time.
WORK_IDLE_SECONDS = env_float("WORK_IDLE_SECONDS", 300.0, minimum=1.0)

# --- Cache -----------------------------------------------------------------------
# Each process's own memory: what is kept in it is derived data under the stamps of what it derives from (a run
# page's sections, a plot's points), so a process never shows another's stale copy. Shared results (the
# meta-evaluation's comparisons) live in the database instead.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "OPTIONS": {"MAX_ENTRIES": env_int("CACHE_MAX_ENTRIES", 5000, minimum=100)},
    }
}

# --- Background work -------------------------------------------------------
CELERY_BROKER_URL = env_url(
    "CELERY_BROKER_URL",
    "filesystem://",
    schemes={"filesystem", "redis", "rediss", "amqp", "amqps", "pyamqp", "memory"},
)
CELERY_BROKER_TRANSPORT_OPTIONS: dict = {}
if CELERY_BROKER_URL.startswith("filesystem://"):
    BROKER_DIR = VAR_DIR / "broker"
    (BROKER_DIR / "queue").mkdir(parents=True, exist_ok=True)
    (BROKER_DIR / "processed").mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "store_processed": False,
        # The exchange tables too, or kombu writes them into the working directory.
        "control_folder": str(BROKER_DIR / "control"),
    }
# Job state lives in the database (assessor.models.Job); no result backend.
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# The queue the web app sends jobs to and the workers take them from: two sites sharing one
# broker keep apart by giving each its own.
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "celery")

# --- LLM endpoint (any OpenAI-compatible server) -----------------------------
LLM_BASE_URL = env_str("LLM_BASE_URL", "")
if LLM_BASE_URL:
    env_url("LLM_BASE_URL", LLM_BASE_URL, schemes={"http", "https"})
LLM_API_KEY = env_str("LLM_API_KEY", "")
LLM_MODEL = env_str("LLM_MODEL", "")
LLM_API_VERSION = env_str("LLM_API_VERSION", "")  # set for Azure OpenAI
LLM_TEMPERATURE = env_float("LLM_TEMPERATURE", 0.0, minimum=0.0)
LLM_TIMEOUT = env_float("LLM_TIMEOUT", 60.0, minimum=0.1)
LLM_CONCURRENCY = env_int("LLM_CONCURRENCY", 8, minimum=1)
LLM_MAX_RETRIES = env_int("LLM_MAX_RETRIES", 5, minimum=0)
LLM_MAX_REASKS = env_int("LLM_MAX_REASKS", 2, minimum=0)
# US dollars per million tokens, for the cost estimate of each call.
LLM_PRICE_INPUT = env_float("LLM_PRICE_INPUT", 0.0, minimum=0.0)
LLM_PRICE_OUTPUT = env_float("LLM_PRICE_OUTPUT", 0.0, minimum=0.0)
# For the prompt tokens the provider served from its prompt cache; unset or empty: the input price.
LLM_PRICE_CACHED_INPUT = (
    env_float("LLM_PRICE_CACHED_INPUT", 0.0, minimum=0.0) if env_str("LLM_PRICE_CACHED_INPUT", "").strip() else None
)
# The default endpoint offers the provider's batch interface (docs/llm.md, "Batch mode"), whose calls are priced
# at this factor of its prices.
LLM_BATCH = env_bool("LLM_BATCH", False)
LLM_BATCH_PRICE_FACTOR = env_float("LLM_BATCH_PRICE_FACTOR", 0.5, minimum=0.0)
# The provider's limits of one batch (OpenAI's): requests in it, and bytes of its input file.
LLM_BATCH_MAX_REQUESTS = env_int("LLM_BATCH_MAX_REQUESTS", 50_000, minimum=1)
LLM_BATCH_MAX_BYTES = env_int("LLM_BATCH_MAX_BYTES", 200 * 1024 * 1024, minimum=1024)
# How often a batch job looks at its batches, and the window it gives the provider to answer them.
LLM_BATCH_POLL_SECONDS = env_float("LLM_BATCH_POLL_SECONDS", 30.0, minimum=0.01)
LLM_BATCH_WINDOW = env_str("LLM_BATCH_WINDOW", "24h")
# Items a batch job's round works at once: its database work, each item's look-ups and writes (PostgreSQL: more).
LLM_BATCH_ROUND_THREADS = env_int("LLM_BATCH_ROUND_THREADS", 1, minimum=1)
# The variables besides LLM_KEY_* an endpoint added on a page may read its key from (assessor/project/llm_endpoints.py).
LLM_KEY_VARIABLES = env_list("LLM_KEY_VARIABLES", [])
# More endpoints, by name, from a TOML file (assessor/project/llm_endpoints.py); the LLM_* ones are "default".
LLM_ENDPOINTS_FILE = env_str("LLM_ENDPOINTS", "")
try:
    LLM_ENDPOINTS = endpoints_file_read(Path(LLM_ENDPOINTS_FILE)) if LLM_ENDPOINTS_FILE else {}
except EndpointsFileInvalid as exc:
    raise ImproperlyConfigured(f"LLM_ENDPOINTS: {exc}") from None

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "WARNING")},
}
