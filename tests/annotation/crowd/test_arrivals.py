"""Who a study link lets in (issue 58, items 6 and 7): its refusals are pages a participant
understands, never 500s; new participants are limited per client address and per study, and
a study may cap how many it takes."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.models import Participant
from tests.annotation.crowd.test_studies import PID, arrive, study  # noqa: F401  # a fixture

pytestmark = pytest.mark.django_db


def test_an_id_whose_account_name_is_taken_gets_a_page_not_a_500(study):  # noqa: F811
    """An account named as the participant's would be (made before the namespace was
    reserved) made participant_arrive refuse, and the page let the refusal out: 500."""
    get_user_model().objects.create_user(username=f"PROLIFIC-{study.project_id}-{PID}")
    answer = arrive(Client(), study)
    assert answer.status_code == 409
    page = answer.content.decode()
    assert 'role="alert"' in page and "cannot open an account for your participant id" in page
    assert not Participant.objects.exists()
