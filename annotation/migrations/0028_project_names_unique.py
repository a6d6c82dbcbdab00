"""Project names unique without regard to case (issue 59: the project list showed two "IMDb
contrast sets"). Existing duplicates are made unique first: the oldest project keeps its name,
each later one gets " (2)", " (3)", … (the first number free), cut to the 200 characters a name
may hold."""

from django.db import migrations, models
from django.db.models.functions import Lower

NAME_LENGTH = 200


def unique_names(apps: object, schema_editor: object) -> None:
    Project = apps.get_model("annotation", "Project")  # type: ignore[attr-defined]
    projects = list(Project.objects.order_by("id").only("id", "name"))
    originals = {p.name.lower() for p in projects}  # a new name takes none of these
    kept: set[str] = set()
    for project in projects:
        name, n = project.name, 1
        while name.lower() in kept or (name != project.name and name.lower() in originals):
            n += 1
            suffix = f" ({n})"
            name = project.name[: NAME_LENGTH - len(suffix)] + suffix
        kept.add(name.lower())
        if name != project.name:
            project.name = name
            project.save(update_fields=["name"])


class Migration(migrations.Migration):
    dependencies = [("annotation", "0027_webhooks")]

    operations = [
        migrations.RunPython(unique_names, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="project",
            constraint=models.UniqueConstraint(
                Lower("name"),
                name="project_name_unique_ci",
                violation_error_message="a project with this name exists (whatever its case).",
            ),
        ),
    ]
