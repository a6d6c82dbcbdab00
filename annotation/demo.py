"""The demo project, written by ContrastLab itself (no outside text). Loading is idempotent."""

from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.authoring.services.drafts import perturbation_save
from annotation.models import Example, Membership, Project
from annotation.projects import services
from annotation.releases.services import release_create
from annotation.validation.services.votes import vote_cast

DEMO_SLUG = "demo-sentiment"
QA_SLUG = "demo-reading"
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


# (original's number in SENTENCES, edited text, label, tag, author, the five validators' votes)
EDITS = [
    (
        1,
        "The soup arrived cold and tasted awful.",
        "negative",
        "intensity",
        "expert1",
        ["negative"] * 5,
    ),
    (
        2,
        "The staff forgot our order once and apologised at once.",
        "positive",
        "negation",
        "expert2",
        ["positive"] * 4 + ["mixed"],
    ),
    (
        3,
        "This lamp is dim, flimsy and hard to assemble.",
        "negative",
        "intensity",
        "expert1",
        ["negative"] * 5,
    ),
    (
        5,
        "I would never stay at this hotel again.",
        "negative",
        "negation",
        "expert2",
        ["negative"] * 5,
    ),
    (
        7,
        "Our guide was impatient, dull and knew no street.",
        "negative",
        "intensity",
        "expert1",
        ["negative"] * 4 + ["positive"],
    ),
    (
        8,
        "The sequel is louder than the first film and far more clever.",
        "positive",
        "comparison",
        "expert2",
        ["positive"] * 3 + ["mixed"] * 2,
    ),
    (
        9,
        "The chairs are comfortable, but only for a short dinner.",
        "negative",
        "contrast",
        "expert1",
        ["negative", "negative", "mixed", "mixed", "positive"],
    ),
    (
        12,
        "The shoes still look new after two years.",
        "positive",
        "expectation",
        "expert2",
        ["positive"] * 5,
    ),
    (
        13,
        "A charming little cafe, although the bread is the worst in town.",
        "negative",
        "contrast",
        "expert1",
        ["positive"] * 3 + ["negative"] * 2,
    ),
    (
        18,
        "I expected a thriller and got two hours of pure suspense.",
        "positive",
        "expectation",
        "expert2",
        ["positive"] * 2,
    ),
    (20, "The dessert was sweet enough to finish twice.", "positive", "intensity", "expert1", []),
]

QA_GUIDELINES = """# Demo guidelines: reading comprehension

Edit the **question** so that its answer in the passage changes (docs/task-types.md), and write the
new answer exactly as it appears in the passage. Change as little as you can, and tag the
reasoning the edit targets.
"""

QA_TAGS = [
    {"name": "order", "description": "Ask about an earlier or later event.", "target": 5},
    {"name": "entity", "description": "Ask about another person, place or thing.", "target": 5},
    {"name": "quantity", "description": "Change a number or a comparison.", "target": 5},
]

# (id, passage, question, answers, split). Passages written for this demo.
PASSAGES = [
    (
        "r1",
        "Ada moved to Lyon in 2015 and to Porto in 2019. She opened a bakery in Porto "
        "a year later.",
        "Where did Ada move in 2015?",
        ["Lyon"],
        "test",
    ),
    (
        "r2",
        "The red team scored twice in the first half; the blue team scored three times "
        "after the break.",
        "How many goals did the red team score?",
        ["twice", "two"],
        "test",
    ),
    (
        "r3",
        "Milo fed the cat before breakfast and walked the dog after lunch.",
        "What did Milo do before breakfast?",
        ["fed the cat"],
        "test",
    ),
    (
        "r4",
        "The bridge is 40 metres long; the tunnel under the river is 900 metres long.",
        "How long is the bridge?",
        ["40 metres"],
        "test",
    ),
    (
        "r5",
        "Priya wrote the report, and Tom checked the figures in it.",
        "Who wrote the report?",
        ["Priya"],
        "test",
    ),
    (
        "r6",
        "The museum opens at nine on weekdays and at ten on Sundays.",
        "When does the museum open on Sundays?",
        ["at ten", "ten"],
        "test",
    ),
    (
        "r7",
        "The old library burned in 1870 and was rebuilt in stone in 1874.",
        "When was the library rebuilt?",
        ["1874"],
        "dev",
    ),
    (
        "r8",
        "Lena planted tomatoes in May; her brother planted beans in June.",
        "What did Lena plant?",
        ["tomatoes"],
        "dev",
    ),
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
    _add_members(project, users)
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
    if not project.perturbations.exists():
        _write_and_validate(project, users)
    if not project.releases.exists():
        release_create(project=project, user=users["admin"], version="demo-1")
    reading = _reading_project(users)
    return {
        "project": project,
        "admin": users["admin"],
        "projects": [project, reading],
        "users": sorted(DEMO_USERS),
        "password": DEMO_PASSWORD,
    }


def _write_and_validate(project: Project, users: dict[str, Any]) -> None:
    """The demo's edits, through the real services: some resolved by five votes (accepted,
    one disputed, one with no majority), some still open for the demo validators."""
    validators = [users[f"validator{i}"] for i in range(1, 6)]
    for number, text, label, tag, author, labels in EDITS:
        pivot = project.examples.get(external_id=f"demo-{number:02d}")
        content = {
            "fields": {"text": text},
            "label": label,
            "tags": [tag],
            "rationale": "Written for the demo.",
        }
        perturbation = perturbation_save(author=users[author], pivot=pivot, submit=True, **content)
        for validator, vote in zip(validators, labels, strict=False):
            vote_cast(
                project=project, item_id=perturbation.item.pk, validator=validator, label=vote
            )


def _reading_project(users: dict[str, Any]) -> Project:
    """A free-text (QA) demo: passages with a read-only context and an editable question."""
    project = Project.objects.filter(slug=QA_SLUG).first()
    if project is None:
        project = services.project_create(
            user=users["admin"],
            name="Demo: reading comprehension",
            slug=QA_SLUG,
            task_type=Project.TaskType.FREE_TEXT,
            fields=[
                {"name": "context", "kind": "text", "editable": False},
                {"name": "question", "kind": "text", "editable": True},
            ],
            labels=[],
            extra_labels=["unanswerable"],
            tags=QA_TAGS,
            guidelines=QA_GUIDELINES,
            settings={"max_edit_ratio": 1.0},
        )
    _add_members(project, users)
    existing = set(project.examples.values_list("external_id", flat=True))
    Example.objects.bulk_create(
        Example(
            project=project,
            external_id=external_id,
            fields={"context": context, "question": question},
            answers=answers,
            split=split,
        )
        for external_id, context, question, answers, split in PASSAGES
        if external_id not in existing
    )
    return project


def _add_members(project: Project, users: dict[str, Any]) -> None:
    for username, roles in DEMO_USERS.items():
        for role in roles:
            Membership.objects.get_or_create(project=project, user=users[username], role=role)
