"""Usernames and e-mails unique without regard to case ("Staffer" beside "staffer" made two
accounts; lookups ignore case). Accounts that already clash stop the migration with a list of
them, to rename or merge first: the migration never picks one for you."""

from django.db import migrations
from django.db.models import Count
from django.db.models.functions import Lower

INDEXES = [
    ("auth_user_username_ci", "LOWER(username)", ""),
    ("auth_user_email_ci", "LOWER(email)", " WHERE email <> ''"),
]


def clashes(apps: object) -> list[str]:
    """Each group of accounts whose username, or non-empty e-mail, is the same but for case."""
    User = apps.get_model("auth", "User")  # type: ignore[attr-defined]
    found = []
    for field in ("username", "email"):
        keys = (
            User.objects.exclude(**{field: ""})
            .values(key=Lower(field))
            .annotate(n=Count("id"))
            .filter(n__gt=1)
            .values_list("key", flat=True)
        )
        for key in keys:
            users = User.objects.annotate(key=Lower(field)).filter(key=key).order_by("id")
            names = ", ".join(f"{u.username!r} (id {u.pk}, {field} {getattr(u, field)!r})"
                              for u in users)
            found.append(f"{field} {key!r}: {names}")
    return found


def refuse_clashes(apps: object, schema_editor: object) -> None:
    found = clashes(apps)
    if found:
        raise RuntimeError(
            "These accounts differ only by the case of their username or e-mail; rename or "
            "merge them (Django admin, Users), then migrate again:\n  " + "\n  ".join(found)
        )


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0017_task_type_names"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        migrations.RunPython(refuse_clashes, migrations.RunPython.noop),
        *(
            migrations.RunSQL(
                f"CREATE UNIQUE INDEX {name} ON auth_user ({expression}){where}",
                f"DROP INDEX {name}",
            )
            for name, expression, where in INDEXES
        ),
    ]
