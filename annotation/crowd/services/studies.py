"""Study links (docs/validation.md, "Validation with a crowd"): a crowd platform sends its
participants to /p/<slug>/study/<token>/ with their id in the query; the link makes or resumes
a participant account scoped to that project alone, serves items_per_participant items, then
gives the completion code. Payments: a CSV per study."""

import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Count, Max, Q, Sum
from django.utils import timezone

from annotation.crowd import arrivals, pool
from annotation.crowd.gates import FAILED, PASSED, quiz_on
from annotation.errors import DomainError
from annotation.models import (
    AuditLog,
    GoldAnswer,
    Membership,
    Participant,
    Project,
    Study,
    ValidatorStatus,
    Vote,
)

# The session key that marks a participant's session, which reaches their project's
# validation and study pages alone (annotation.crowd.scope).
PARTICIPANT = "participant"
# Prolific ids are 24 hexadecimal digits, MTurk's worker ids 12-14 capitals and digits; anything
# of letters, digits, '-' and '_' is taken, as the platforms may change their forms.
PLATFORM_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
PROLIFIC_RETURN = "https://app.prolific.com/submissions/complete?cc={code}"
MAX_PARTICIPANTS = 1_000_000
# What each platform appends to the link it sends participants to.
LINK_QUERY: dict[str, str] = {
    Study.Platform.PROLIFIC: "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}"
    "&SESSION_ID={{%SESSION_ID%}}",
    Study.Platform.MTURK: "",  # MTurk adds workerId, assignmentId and hitId itself
}


@transaction.atomic
def study_create(
    *,
    project: Project,
    actor: Any,
    name: str,
    platform: str,
    items_per_participant: int | None = None,
    completion_code: str = "",
    max_participants: int | None = None,
) -> Study:
    """A study link for `project`; its gold pool is filled for the gates. `max_participants`
    caps the participants it makes (None: no cap)."""
    if platform not in Study.Platform.values:
        raise DomainError("platform is prolific or mturk.", field="platform")
    items = (
        project.setting("items_per_participant")
        if items_per_participant is None
        else items_per_participant
    )
    if not 1 <= items <= 10_000:
        raise DomainError(
            "items_per_participant is from 1 to 10000.", field="items_per_participant"
        )
    if max_participants is not None and not 1 <= max_participants <= MAX_PARTICIPANTS:
        raise DomainError(
            f"max_participants is from 1 to {MAX_PARTICIPANTS}, or empty for no cap.",
            field="max_participants",
        )
    code = completion_code or secrets.token_hex(4).upper()
    if not PLATFORM_ID.fullmatch(code):
        raise DomainError(
            "A completion code holds letters, digits, '-' and '_' only.", field="completion_code"
        )
    study = Study.objects.create(
        project=project,
        name=name.strip() or "Study",
        platform=platform,
        token=secrets.token_urlsafe(18),
        items_per_participant=items,
        max_participants=max_participants,
        completion_code=code,
        ended_code=secrets.token_hex(4).upper(),
        created_by=actor,
    )
    pool.pool_refresh(project)
    AuditLog.record(
        actor=actor,
        action="study_created",
        project=project,
        study=study.pk,
        platform=platform,
        items_per_participant=items,
        max_participants=max_participants,
    )
    return study


def study_path(study: Study) -> str:
    """The link to paste into the platform, with its placeholders."""
    return f"/p/{study.project.slug}/study/{study.token}/{LINK_QUERY[study.platform]}"


@dataclass(frozen=True)
class Arrival:
    """Who a platform sent: its participant id, and the study, session or assignment."""

    external_id: str
    platform_study: str = ""
    platform_session: str = ""
    assignment: str = ""


def arrival_of(query: Any) -> Arrival:
    """Read the platform's ids from the link's query (Prolific's or MTurk's names)."""
    external_id = query.get("PROLIFIC_PID") or query.get("workerId") or ""
    if not PLATFORM_ID.fullmatch(external_id):
        raise DomainError(
            "This link needs your participant id (PROLIFIC_PID or workerId): open it from the "
            "study's page on your platform."
        )
    extras = {
        "platform_study": query.get("STUDY_ID") or query.get("hitId") or "",
        "platform_session": query.get("SESSION_ID") or "",
        "assignment": query.get("assignmentId") or "",
    }
    if any(value and not PLATFORM_ID.fullmatch(value) for value in extras.values()):
        raise DomainError("The study, session or assignment id in this link is malformed.")
    return Arrival(external_id, **extras)


def participant_arrive(*, study: Study, arrival: Arrival, address: str = "") -> Participant:
    """The participant of this id in the study's project: made on first arrival (an account
    with no e-mail and no password, validator of this project alone), resumed after. A new
    one counts against the rates of its client `address` and of the study, and the study's
    cap, under its row lock (annotation.crowd.arrivals)."""
    project = study.project
    found = Participant.objects.filter(project=project, external_id=arrival.external_id)
    existing = found.select_related("study", "user").first()
    if existing is not None:
        found.update(last_seen_at=timezone.now())
        return existing
    arrivals.check_arrival_rate(study=study, address=address)
    try:
        with transaction.atomic():
            arrivals.check_room(Study.objects.select_for_update().get(pk=study.pk))
            user = get_user_model()(username=Participant.username_for(study, arrival.external_id))
            user.set_unusable_password()
            user.save()
            Membership.objects.create(project=project, user=user, role=Membership.Role.VALIDATOR)
            return Participant.objects.create(
                project=project,
                study=study,
                user=user,
                external_id=arrival.external_id,
                platform_study=arrival.platform_study,
                platform_session=arrival.platform_session,
                assignment=arrival.assignment,
            )
    except IntegrityError:  # the same id arrived twice at once: the first one made it
        existing = found.select_related("study", "user").first()
        if existing is None:
            raise DomainError(
                "This study cannot open an account for your participant id: one of that "
                "name exists already. Please write to the researchers through your platform; "
                "you need not return the study yet.",
                code="conflict",
            ) from None
        return existing


def participant_of(request: Any, slug: str) -> Participant | None:
    """The participant a session belongs to, in project `slug`; None for everyone else (no
    query for a session that is not a participant's)."""
    return participant_in(request.session, request.user, slug)


def participant_in(session: Any, user: Any, slug: str) -> Participant | None:
    """`participant_of` from a session and its user."""
    mark = session.get(PARTICIPANT)
    if not mark or mark["project"] != slug:
        return None
    found = Participant.objects.select_related("study", "project", "user")
    return found.filter(pk=mark["participant"], user_id=user.pk).first()


def serves_more(request: Any, slug: str) -> bool:
    """False once the session's participant has labelled their items (the queue then serves
    them nothing); True for every other user, at no cost."""
    participant = participant_of(request, slug)
    return participant is None or not participant_finished(participant)


@dataclass(frozen=True)
class Progress:
    """After a vote: the items the validator answered (gold ones included: the count the
    Validate page shows), and whether the queue serves them more (not a participant who
    labelled their items)."""

    done: int
    serves: bool


def progress(*, project: Project, validator: Any, session: Any) -> Progress:
    done = labelled(project.pk, validator)
    participant = participant_in(session, validator, project.slug)
    return Progress(done, participant is None or not participant_finished(participant, done))


def items_done(participant: Participant) -> int:
    """Items the participant answered: votes and gold items alike (they are all items)."""
    return labelled(participant.project_id, participant.user)


def labelled(project_id: int, validator: Any) -> int:
    """Items a validator answered in a project, votes and gold items alike: the count the
    Validate page shows, which never tells a gold item apart."""
    votes = Vote.objects.filter(item__project_id=project_id, validator=validator)
    gold = GoldAnswer.objects.filter(project_id=project_id, validator=validator)
    return votes.count() + gold.count()


def participant_finished(participant: Participant, done: int | None = None) -> bool:
    """Whether the participant labelled their items (`done` of them, when counted already);
    marks their completion once."""
    if participant.completed_at is not None:
        return True
    done = items_done(participant) if done is None else done
    if done < participant.study.items_per_participant:
        return False
    Participant.objects.filter(pk=participant.pk, completed_at=None).update(
        completed_at=timezone.now()
    )
    return True


def payment_rows(study: Study) -> Iterator[dict[str, Any]]:
    """One row per participant of the study: their ids, items, seconds and whether they
    passed (finished their items, passed the test where there is one, not paused now), and
    whether the gold checks ever paused them."""
    participants = list(study.participants.select_related("user").order_by("started_at", "id"))
    users = [p.user_id for p in participants]
    project = study.project
    votes = _per_user(Vote.objects.filter(item__project=project, validator_id__in=users))
    gold = _per_user(GoldAnswer.objects.filter(project=project, validator_id__in=users))
    statuses = {
        s.validator_id: s
        for s in ValidatorStatus.objects.filter(project=project, validator_id__in=users)
    }
    paused_ever = set(
        AuditLog.objects.filter(
            project=project, action="validator_paused", details__validator__in=users
        ).values_list("details__validator", flat=True)
    )
    for p in participants:
        n_votes, vote_seconds, last_vote = votes.get(p.user_id, (0, 0, None))
        n_gold, gold_seconds, last_gold = gold.get(p.user_id, (0, 0, None))
        status = statuses.get(p.user_id) or ValidatorStatus()
        last = p.completed_at or max([t for t in (last_vote, last_gold) if t], default=None)
        yield {
            "participant_id": p.external_id,
            "study_id": p.platform_study,
            "session_id": p.platform_session,
            "assignment_id": p.assignment,
            "items": n_votes + n_gold,
            "seconds": round((last - p.started_at).total_seconds()) if last else 0,
            "seconds_on_items": (vote_seconds or 0) + (gold_seconds or 0),
            "qualification": status.qualification or ("pending" if n_gold else ""),
            "paused": status.paused,
            # Paused by the gold checks at some time (sent back with the work-ended code),
            # even when an admin resumed them since.
            "was_paused": status.paused or p.user_id in paused_ever,
            "completed": p.completed_at is not None,
            "passed": p.completed_at is not None
            and not status.paused
            and status.qualification != FAILED
            and (status.qualification == PASSED or not quiz_on(project)),
            "started_at": p.started_at.isoformat(),
            "completed_at": p.completed_at.isoformat() if p.completed_at else "",
        }


def _per_user(rows: Any) -> dict[int, tuple[int, int, Any]]:
    grouped = rows.values("validator_id").annotate(
        n=Count("id"), seconds=Sum("seconds_spent"), last=Max("created_at")
    )
    return {r["validator_id"]: (r["n"], r["seconds"], r["last"]) for r in grouped.order_by()}


def study_figures(project: Project) -> list[dict[str, Any]]:
    """Each study with its participants, and how many completed."""
    studies = project.studies.annotate(
        n_participants=Count("participants"),
        n_completed=Count("participants", filter=~Q(participants__completed_at=None)),
    )
    return [{"study": s, "link": study_path(s)} for s in studies]
