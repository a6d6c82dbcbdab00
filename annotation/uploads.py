"""Where uploads are kept, for the workflows that write them and the one that deletes a
project: a background import's files (MEDIA_ROOT/imports/<id>/, its job names them) and a
staged preview's (MEDIA_ROOT/staged/<token>/, its meta.json names the project)."""

import contextlib
import json
import shutil
from pathlib import Path

from django.conf import settings

from annotation.models import Project


def imports_folder() -> Path:
    return Path(settings.MEDIA_ROOT) / "imports"


def staged_folder() -> Path:
    return Path(settings.MEDIA_ROOT) / "staged"


def staged_of(project: Project) -> list[Path]:
    """The folders of a project's staged uploads."""
    folders = []
    for folder in staged_folder().iterdir() if staged_folder().exists() else ():
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            if json.loads((folder / "meta.json").read_text())["project"] == project.pk:
                folders.append(folder)
    return folders


def uploads_of(project: Project) -> list[Path]:
    """The folders of a project's uploads: each background import's (its worker's or not),
    and each staged preview's. Deleting the project removes them."""
    imports = imports_folder()
    named = project.import_jobs.values_list("files", flat=True)
    folders = {(imports.parent / f["path"]).parent for files in named for f in files.values()}
    return sorted(f for f in folders if f.parent == imports) + staged_of(project)


def remove_uploads(folders: list[Path]) -> None:
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
