"""OAuth failures as diagnostics: the SDK's and our auth exceptions, mapped in one place.

The mapping lives beside the SDK's OAuth code (only `connections/` and `auth/` import the
SDK), so `services/auth.py` works with diagnostics alone.
"""

from __future__ import annotations

from mcp_sidecar.connections.errors import leaves
from mcp_sidecar.protocol.errors import SidecarError, fail


class BrowserUnavailable(Exception):
    pass


def login_failure(exc: BaseException, operation: str, server: str) -> SidecarError:
    from mcp.client.auth import OAuthFlowError, OAuthRegistrationError, OAuthTokenError
    from pydantic import ValidationError

    from mcp_sidecar.auth.callback import CallbackPortInUse
    from mcp_sidecar.auth.login import AuthorizationDenied, CallbackInvalid, LoginNotNeeded
    from mcp_sidecar.auth.provider import IssuerChanged, PkceUnsupported
    from mcp_sidecar.auth.store import CredentialStoreUnavailable
    from mcp_sidecar.auth.urls import OAuthUrlRefused
    from mcp_sidecar.connections.errors import FailureContext, classify

    def oauth(message: str) -> SidecarError:
        return fail("oauth_failed", operation, message, server)

    found = leaves(exc)
    for leaf in found:
        if isinstance(leaf, SidecarError):
            return leaf
        if isinstance(leaf, CredentialStoreUnavailable):
            return fail("credential_store_unavailable", operation, "The OS keyring is not available.", server)
        if isinstance(leaf, IssuerChanged):
            return fail(
                "oauth_issuer_changed",
                operation,
                "The server's authorization server is not the one the stored credentials belong to.",
                server,
            )
        if isinstance(leaf, CallbackPortInUse):
            return fail("callback_unavailable", operation, "The OAuth callback port is in use.", server)
        if isinstance(leaf, OAuthUrlRefused):
            return fail("oauth_refused", operation, _REFUSED[leaf.reason].format(what=leaf.what), server)
        if isinstance(leaf, PkceUnsupported):
            return fail(
                "oauth_refused",
                operation,
                "Refused the authorization server: its metadata does not list S256 in "
                "code_challenge_methods_supported (PKCE is required).",
                server,
            )
        if isinstance(leaf, AuthorizationDenied):
            return oauth("The authorization server answered with an error (access denied or the request refused).")
        if isinstance(leaf, CallbackInvalid):
            return oauth("The callback carried no authorization code and state.")
        if isinstance(leaf, BrowserUnavailable):
            return oauth("No browser could be opened; log in with the no-browser flow.")
        if isinstance(leaf, LoginNotNeeded):
            return oauth("The server did not ask for authentication; nothing was stored.")
        if isinstance(leaf, TimeoutError):
            return fail("timeout", operation, "The login did not receive its callback in time.", server)
        if isinstance(leaf, OAuthRegistrationError):
            return oauth("Dynamic client registration failed; configure oauthClientId for a pre-registered client.")
        if isinstance(leaf, OAuthTokenError):
            return oauth("The token request failed.")
        if isinstance(leaf, OAuthFlowError):
            text = str(leaf)
            if text.startswith("State parameter mismatch"):
                return oauth("The callback's state did not match this login.")
            if "issuer" in text.lower() or "iss" in text.split():
                return oauth("The authorization server's issuer check failed.")
            if text.startswith("Protected resource"):
                return oauth("The server's protected-resource metadata does not match its URL.")
            return oauth("OAuth discovery or authorization failed.")
        if isinstance(leaf, ValidationError):
            return oauth("The server's OAuth metadata is not valid.")
    return classify(exc, FailureContext(operation=operation, server=server, connecting=True))


_REFUSED = {
    "insecure": (
        "Refused {what}: OAuth URLs must use HTTPS (plain HTTP only on loopback), with a valid host and no credentials."
    ),
    "blocked_address": (
        "Refused {what}: it is on a private, link-local, unique-local or cloud-metadata address "
        "(loopback only for a loopback server)."
    ),
    "foreign_origin": "Refused {what}: protected-resource metadata is fetched only from the server's own origin.",
}
