"""The demo project, written by ContrastLab itself (no outside text). Loading is idempotent."""

from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.models import Example, Membership, Project
from annotation.projects import services

DEMO_SLUG = "demo-sentiment"
DEMO_PASSWORD = "contrast-demo"  # printed by the run command; for local demos only

DEMO_USERS = {
    "admin": ["admin"],
    "expert1": ["expert"],
    "expert2": ["expert"],
    **{f"validator{i}": ["validator"] for i in range(1, 7)},
}

GUIDELINES = """# Demo guidelines

You write **contrast sets**: small edits to a review that change its gold sentiment.

1. Change as little as possible: a word or a short phrase.
2. Keep the review fluent and plausible.
3. The new label must be clear to a careful reader.
4. Tag every edit with the phenomenon it targets.
5. Explain your edit in one sentence in the rationale.
"""

TAGS = [
    {"name": "negation", "description": "Add or remove a negation (not, never, no).", "target": 15},
    {"name": "intensity", "description": "Swap a sentiment word for its opposite.", "target": 15},
    {"name": "contrast", "description": "Add or move a 'but'/'although' clause.", "target": 10},
    {"name": "comparison", "description": "Change a comparison (better/worse than).", "target": 8},
    {"name": "expectation", "description": "Flip whether expectations were met.", "target": 8},
]

# (text, label, split). Short reviews written for this demo.
SENTENCES = [
    ("The soup arrived hot and tasted wonderful.", "positive", "test"),
    ("The staff forgot our order twice and never apologised.", "negative", "test"),
    ("This lamp is bright, sturdy and easy to assemble.", "positive", "test"),
    ("The plot drags and the ending makes no sense.", "negative", "test"),
    ("I would happily stay at this hotel again.", "positive", "test"),
    ("The battery dies before lunch every single day.", "negative", "test"),
    ("Our guide was patient, funny and knew every street.", "positive", "test"),
    ("The sequel is louder than the first film but far less clever.", "negative", "test"),
    ("The chairs are comfortable even after a long dinner.", "positive", "test"),
    ("Customer support kept me on hold for an hour.", "negative", "test"),
    ("The album grows on you with every listen.", "positive", "test"),
    ("The shoes fell apart after two weeks.", "negative", "test"),
    ("A charming little cafe with the best bread in town.", "positive", "test"),
    ("The instructions were confusing and half the screws were missing.", "negative", "test"),
    ("The actors clearly enjoyed every scene, and so did we.", "positive", "test"),
    ("The room smelled of smoke and the sheets were stained.", "negative", "test"),
    ("Delivery was early and the package was neatly wrapped.", "positive", "test"),
    ("I expected a thriller and got two hours of nothing.", "negative", "test"),
    ("The new update made the app noticeably faster.", "positive", "test"),
    ("The dessert was too sweet to finish.", "negative", "test"),
    ("This blender crushes ice in seconds.", "positive", "test"),
    ("The concert started late and the sound was muddy.", "negative", "test"),
    ("The teacher explained every step with real care.", "positive", "test"),
    ("The trail was overcrowded and poorly marked.", "negative", "test"),
    ("The jacket keeps me warm without feeling heavy.", "positive", "test"),
    ("The museum tour felt rushed and shallow.", "negative", "test"),
    ("The pasta was fresh and the portions generous.", "positive", "test"),
    ("My laptop overheats whenever I open a video call.", "negative", "test"),
    ("The puzzle is challenging but never unfair.", "positive", "test"),
    ("The hotel pool was closed for our entire stay.", "negative", "test"),
    ("The documentary is moving and beautifully filmed.", "positive", "dev"),
    ("The printer jams on every other page.", "negative", "dev"),
    ("The bakery's croissants are worth the queue.", "positive", "dev"),
    ("The game crashes as soon as the second level loads.", "negative", "dev"),
    ("The park is clean, quiet and full of shade.", "positive", "dev"),
    ("The headphones hurt my ears within minutes.", "negative", "dev"),
    ("The novel's characters feel like old friends.", "positive", "train"),
    ("The train was cancelled and nobody told us why.", "negative", "train"),
    ("The garden centre staff gave us excellent advice.", "positive", "train"),
    ("The coffee was cold and bitter.", "negative", "train"),
]


@transaction.atomic
def load_demo() -> dict[str, Any]:
    """Create or refresh the demo users and project; running it twice changes nothing."""
    User = get_user_model()
    users = {}
    for username, _ in DEMO_USERS.items():
        user, created = User.objects.get_or_create(username=username)
        if created:
            user.set_password(DEMO_PASSWORD)
            user.is_staff = user.is_superuser = username == "admin"
            user.save()
        users[username] = user
    project = Project.objects.filter(slug=DEMO_SLUG).first()
    if project is None:
        project = services.project_create(
            user=users["admin"],
            name="Demo: review sentiment",
            slug=DEMO_SLUG,
            fields=[{"name": "text", "kind": "text", "editable": True}],
            labels=["positive", "negative"],
            extra_labels=["mixed", "invalid"],
            tags=TAGS,
            guidelines=GUIDELINES,
        )
    for username, roles in DEMO_USERS.items():
        for role in roles:
            Membership.objects.get_or_create(project=project, user=users[username], role=role)
    existing = set(project.examples.values_list("external_id", flat=True))
    Example.objects.bulk_create(
        Example(
            project=project,
            external_id=f"demo-{n:02d}",
            fields={"text": text},
            label=label,
            split=split,
        )
        for n, (text, label, split) in enumerate(SENTENCES, start=1)
        if f"demo-{n:02d}" not in existing
    )
    return {"project": project, "users": sorted(DEMO_USERS), "password": DEMO_PASSWORD}
