"""How many new participants a study link makes (docs/security.md, "Crowd participants"):
2,000 made-up platform ids made 2,000 accounts in a minute. At most
STUDY_NEW_PARTICIPANTS_PER_ADDRESS_HOUR an hour from one client address and
STUDY_NEW_PARTICIPANTS_PER_STUDY_MINUTE a minute into one study, counted in the cache that the
API's throttles use (set CACHE_URL so that every web process shares it); and at most the
study's own cap, `Study.max_participants`. A participant who comes back is never counted."""

from django.conf import settings
from django.core.cache import cache

from annotation.errors import DomainError
from annotation.models import Study

BUSY_ADDRESS = (
    "Too many people have started studies from your network in the last hour. Please wait "
    "an hour and open the link from your platform again; nothing was recorded yet."
)
BUSY_STUDY = (
    "Many people are starting this study right now. Please wait a minute and open the link "
    "from your platform again; nothing was recorded yet."
)
FULL = (
    "This study has all the participants it takes, so it cannot start for you. Please return "
    "it on your platform (on Prolific: Return submission); nothing was recorded."
)


def check_arrival_rate(*, study: Study, address: str) -> None:
    """Count one new participant from `address` into `study`; refuse (429) past either rate."""
    if _counted(f"study-arrivals:address:{address}", 3600) > (
        settings.STUDY_NEW_PARTICIPANTS_PER_ADDRESS_HOUR
    ):
        raise DomainError(BUSY_ADDRESS, code="throttled")
    if _counted(f"study-arrivals:study:{study.pk}", 60) > (
        settings.STUDY_NEW_PARTICIPANTS_PER_STUDY_MINUTE
    ):
        raise DomainError(BUSY_STUDY, code="throttled")


def check_room(study: Study) -> None:
    """Under the study's row lock (the caller's): refuse (409) once it has its cap."""
    cap = study.max_participants
    if cap is not None and study.participants.count() >= cap:
        raise DomainError(FULL, code="conflict")


def _counted(key: str, window: int) -> int:
    """The count of `key` in its fixed window of `window` seconds, this one included."""
    cache.add(key, 0, timeout=window)
    try:
        return cache.incr(key)
    except ValueError:  # the window ended between the two calls
        cache.set(key, 1, timeout=window)
        return 1
