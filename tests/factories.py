"""Test data comes from here."""

import json
from typing import Any

import factory
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Example, Membership, Project, Tag
from annotation.models.config import DEFAULT_SETTINGS


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("pw")


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Project

    name = factory.Sequence(lambda n: f"Project {n}")
    slug = factory.Sequence(lambda n: f"project-{n}")
    fields = factory.LazyFunction(lambda: [{"name": "text", "kind": "text", "editable": True}])
    labels = factory.LazyFunction(lambda: ["positive", "negative"])
    extra_labels = factory.LazyFunction(lambda: ["mixed"])
    settings = factory.LazyFunction(lambda: dict(DEFAULT_SETTINGS))


class TagFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Tag

    project = factory.SubFactory(ProjectFactory)
    name = factory.Sequence(lambda n: f"tag{n}")
    description = "a phenomenon"


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    project = factory.SubFactory(ProjectFactory)
    user = factory.SubFactory(UserFactory)
    role = Membership.Role.EXPERT


class ExampleFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Example

    project = factory.SubFactory(ProjectFactory)
    external_id = factory.Sequence(lambda n: f"ex-{n}")
    fields = factory.Sequence(lambda n: {"text": f"The film number {n} was good."})
    label = "positive"
    split = "test"


def member(project: Project, username: str, *roles: str):  # type: ignore[no-untyped-def]
    user = UserFactory(username=username)
    for role in roles:
        MembershipFactory(project=project, user=user, role=role)
    return user


def submitted_perturbation(  # type: ignore[no-untyped-def]
    project, author, *, label="negative", tag="negation", pivot=None, text=None
):
    """A perturbation submitted through the real authoring service."""
    from annotation.authoring.services.drafts import perturbation_save

    pivot = pivot or ExampleFactory(project=project, label="positive")
    if text is None:
        original = pivot.fields["text"]
        text = original.replace("good", "bad") if "good" in original else original + " Not."
    if not project.tags.filter(name=tag).exists():
        TagFactory(project=project, name=tag)
    return perturbation_save(
        author=author, pivot=pivot, fields={"text": text}, label=label, tags=[tag], submit=True
    )


TEXTS = ["the film was good", "the acting was great", "a good plot", "the film was great .",
         "good acting", "the plot was good and the acting great"]  # fmt: skip


def released_contrast_sets(project, people):  # type: ignore[no-untyped-def]
    """A release of six contrast sets (the first with two perturbations), tags on each."""
    from annotation.models import Perturbation
    from annotation.releases.services import release_create

    for n, text in enumerate(TEXTS):
        pivot = ExampleFactory(project=project, external_id=f"s{n}", fields={"text": text},
                               label="positive")  # fmt: skip
        words = ("bad", "awful") if n == 0 else ("bad",)
        for word in words:
            edited = text.replace("good", word).replace("great", word)
            tag = "negation" if word == "bad" else "intensity"
            p = submitted_perturbation(project, people["expert"], pivot=pivot, text=edited, tag=tag)
            Perturbation.objects.filter(pk=p.pk).update(status="accepted")
    return release_create(project=project, user=people["admin"], version="1.0")


def serve(item, validator):  # type: ignore[no-untyped-def]
    """Lease `item` to `validator`, as the queue does when it serves it: a test that picks the
    item itself, rather than asking the queue, may then vote on it whatever came before."""
    from datetime import timedelta

    from django.utils import timezone

    from annotation.models import Lease

    expires = timezone.now() + timedelta(minutes=10)
    Lease.objects.update_or_create(item=item, validator=validator, defaults={"expires_at": expires})


def vote_all(item, validators, labels):  # type: ignore[no-untyped-def]
    """Cast one vote per validator on an item served to each, through the real service."""
    from annotation.validation.services.votes import vote_cast

    for validator, label in zip(validators, labels, strict=False):
        serve(item, validator)
        vote_cast(project=item.project, item_id=item.pk, validator=validator, label=label)
    item.refresh_from_db()
    return item


def project_creator(username: str = "creator"):  # type: ignore[no-untyped-def]
    """A user granted can_create_projects in the Django admin."""
    from django.contrib.auth.models import Permission

    user: Any = UserFactory(username=username)
    user.user_permissions.add(Permission.objects.get(codename="can_create_projects"))
    return user


def import_votes(client, project, lines: list[Any]):  # type: ignore[no-untyped-def]
    """POST a vote import (docs/metrics.md) of these JSONL lines, each an object."""
    content = "\n".join(json.dumps(line) for line in lines).encode()
    return client.post(
        f"/api/projects/{project.slug}/import/votes/",
        {"file": SimpleUploadedFile("votes.jsonl", content)},
        format="multipart",
    )
