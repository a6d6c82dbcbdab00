"""What the test provider says of a person: their address, whether it is verified (a user whose
last name is "unverified" is not), and their username."""

from typing import Any

from oauth2_provider.oauth2_validators import OAuth2Validator


class Claims(OAuth2Validator):
    def get_additional_claims(self, request: Any) -> dict[str, Any]:
        user = request.user
        return {
            "email": user.email,
            "email_verified": user.last_name != "unverified",
            "preferred_username": user.username,
        }
