"""What the crowd's gates and a study make of a validator's pages (docs/validation.md,
"Validation with a crowd"), in one record that the Validate page, a participant's study pages
and the API read: whether the gates hide the count left and undo, whether the gates ended
this validator's work, and a participant's progress through their study."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from annotation.crowd import gates
from annotation.crowd.services import studies
from annotation.models import Participant, Project


@dataclass(frozen=True)
class ValidateState:
    """A validator's standing on a project's validation pages, before an item is served.

    `gated`: the gates are on, so the pages show no count of items left and no undo
    (`gates.hides_left_and_undo` says why). `ended`: "failed" or "paused" when the gates ended
    their work, "" otherwise. `done`: the items they answered, gold items included (a gold item
    answered counts as an item done, so that the page never tells them apart). `participant`:
    the session's study participant, or None; `finished` once they labelled their items."""

    gated: bool
    ended: str
    done: int
    participant: Participant | None = None
    finished: bool = False

    @property
    def completed(self) -> bool:
        """A participant who is done, one way or the other: their completion page, not an
        item, is theirs to see."""
        return self.participant is not None and bool(self.finished or self.ended)

    @property
    def of_items(self) -> int | None:
        """The items a participant's study asks of them (None for everyone else)."""
        return self.participant.study.items_per_participant if self.participant else None

    @property
    def study_token(self) -> str:
        """A participant's study (its completion page's address), "" for everyone else."""
        return self.participant.study.token if self.participant else ""

    @property
    def ended_message(self) -> str:
        return gates.ended_message(self.ended, participant=self.participant is not None)


def validate_state(
    *, project: Project, validator: Any, session: Mapping[str, Any]
) -> ValidateState:
    """The one reading of the gates and the study for `validator` in `project`; `session` marks
    a study participant's (annotation.crowd.services.studies.PARTICIPANT)."""
    participant = studies.participant_in(session, validator, project.slug)
    done = studies.labelled(project.pk, validator)
    return ValidateState(
        gated=gates.hides_left_and_undo(project),
        ended=gates.ended(project, validator),
        done=done,
        participant=participant,
        finished=participant is not None and studies.participant_finished(participant, done),
    )


def participant_ran_out(state: ValidateState) -> bool:
    """A participant whom the queue serves nothing more has finished, with fewer items than
    their study asks (their completion page says so); whether `state` is a participant's."""
    if state.participant is None:
        return False
    Participant.objects.filter(pk=state.participant.pk, completed_at=None).update(
        completed_at=timezone.now()
    )
    return True
