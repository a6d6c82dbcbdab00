import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("contrastlab")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The names the tasks had until they took their modules' (2026-12): messages queued under them
# before an upgrade still run.
LEGACY_NAMES = {
    "annotation.tasks.run_import_task": "annotation.imports.tasks.run_import_task",
    "annotation.tasks.index_search": "annotation.data.tasks.index_search_task",
    "annotation.tasks.send_invites": "annotation.projects.tasks.send_invites_task",
    "evaluation.tasks.run_evaluation_task": "evaluation.runs.tasks.run_evaluation_task",
    "evaluation.tasks.run_shard_task": "evaluation.runs.tasks.run_shard_task",
    "evaluation.tasks.run_analysis_task": "evaluation.analyses.tasks.run_analysis_task",
}


@app.on_after_finalize.connect
def accept_legacy_names(sender: Celery, **_: object) -> None:
    sender.loader.import_default_modules()  # the apps' tasks modules, as a worker imports them
    for old, name in LEGACY_NAMES.items():
        sender.tasks[old] = sender.tasks[name]
