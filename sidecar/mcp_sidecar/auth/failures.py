"""OAuth failures as diagnostics: the SDK's and our auth exceptions, mapped in one place.

The mapping lives beside the SDK's OAuth code (only `connections/` and `auth/` import the
SDK), so `services/auth.py` works with diagnostics alone.
"""

from __future__ import annotations

from collections.abc import Callable

from mcp_sidecar.connections.errors import leaves
from mcp_sidecar.protocol.errors import DiagnosticCode, SidecarError, fail


class BrowserUnavailable(Exception):
    pass


def login_failure(exc: BaseException, operation: str, server: str) -> SidecarError:
    """The diagnostic of a failed login or stored-token flow: the first leaf a rule knows, in rule order."""
    from mcp_sidecar.connections.errors import FailureContext, classify

    rules = _rules()
    for leaf in leaves(exc):
        if isinstance(leaf, SidecarError):
            return leaf
        for kind, explain in rules:
            if isinstance(leaf, kind):
                code, message = explain(leaf)
                return fail(code, operation, message, server)
    return classify(exc, FailureContext(operation=operation, server=server, connecting=True))


Explain = Callable[[BaseException], tuple[DiagnosticCode, str]]


def _oauth(message: str) -> Explain:
    return lambda leaf: ("oauth_failed", message)


def _rules() -> list[tuple[type[BaseException], Explain]]:
    """Exception type -> (code, message), checked in this order for each leaf of the failure."""
    from mcp.client.auth import OAuthFlowError, OAuthRegistrationError, OAuthTokenError
    from pydantic import ValidationError

    from mcp_sidecar.auth.callback import CallbackPortInUse
    from mcp_sidecar.auth.dpop import DpopKeyInvalid, DpopUnsupported
    from mcp_sidecar.auth.login import AuthorizationDenied, CallbackInvalid, LoginNotNeeded
    from mcp_sidecar.auth.provider import (
        IssuerChanged,
        IssuerNotConfigured,
        PkceUnsupported,
        RegistrationUnavailable,
        ScopesNeedApproval,
    )
    from mcp_sidecar.auth.store import CredentialStoreUnavailable
    from mcp_sidecar.auth.token_steps import ClientAuthUnsupported
    from mcp_sidecar.auth.urls import OAuthUrlRefused

    return [
        (CredentialStoreUnavailable, lambda leaf: ("credential_store_unavailable", "The OS keyring is not available.")),
        (
            IssuerChanged,
            lambda leaf: (
                "oauth_issuer_changed",
                "The server's authorization server is not the one the stored credentials belong to.",
            ),
        ),
        (
            IssuerNotConfigured,
            lambda leaf: (
                "oauth_refused",
                "Refused the authorization server: the server names another issuer than the configured oauthIssuer.",
            ),
        ),
        (CallbackPortInUse, lambda leaf: ("callback_unavailable", "The OAuth callback port is in use.")),
        (OAuthUrlRefused, _url_refused),
        (
            PkceUnsupported,
            lambda leaf: (
                "oauth_refused",
                "Refused the authorization server: its metadata does not list S256 in "
                "code_challenge_methods_supported (PKCE is required).",
            ),
        ),
        (
            DpopUnsupported,
            lambda leaf: (
                "oauth_refused",
                "Refused the authorization server: oauthDpop is set, and it does not offer DPoP with ES256 "
                "(dpop_signing_alg_values_supported) or issued a token not bound to the key.",
            ),
        ),
        (
            DpopKeyInvalid,
            _oauth("The DPoP key stored with the tokens is unusable; log in again to create a new one."),
        ),
        (
            ClientAuthUnsupported,
            lambda leaf: (
                "oauth_refused",
                "The token endpoint accepts neither client_secret_basic nor client_secret_post, "
                "so the configured oauthClientSecret cannot be sent.",
            ),
        ),
        (
            RegistrationUnavailable,
            lambda leaf: (
                "oauth_failed",
                "The authorization server offers no way to register this client: register one with it and "
                "configure oauthClientId (with oauthClientSecret if it issued one), or oauthClientMetadataUrl "
                "if it accepts client metadata documents.",
            ),
        ),
        (
            ScopesNeedApproval,
            _oauth("The server asks for more scopes, and its stored credentials were removed meanwhile; log in again."),
        ),
        (
            AuthorizationDenied,
            _oauth("The authorization server answered with an error (access denied or the request refused)."),
        ),
        (CallbackInvalid, _oauth("The callback carried no authorization code and state.")),
        (BrowserUnavailable, _oauth("No browser could be opened; log in with the no-browser flow.")),
        (LoginNotNeeded, _oauth("The server did not ask for authentication; nothing was stored.")),
        (TimeoutError, lambda leaf: ("timeout", "The login did not receive its callback in time.")),
        (
            OAuthRegistrationError,
            _oauth("Dynamic client registration failed; configure oauthClientId for a pre-registered client."),
        ),
        (OAuthTokenError, _oauth("The token request failed.")),
        (OAuthFlowError, _flow_error),
        (ValidationError, _oauth("The server's OAuth metadata is not valid.")),
    ]


def _url_refused(leaf: BaseException) -> tuple[DiagnosticCode, str]:
    from mcp_sidecar.auth.urls import OAuthUrlRefused

    assert isinstance(leaf, OAuthUrlRefused)
    return "oauth_refused", _REFUSED[leaf.reason].format(what=leaf.what)


def _flow_error(leaf: BaseException) -> tuple[DiagnosticCode, str]:
    """The SDK raises one OAuthFlowError type for several failures; only its text tells them apart."""
    text = str(leaf)
    if text.startswith("State parameter mismatch"):
        return "oauth_failed", "The callback's state did not match this login."
    if "issuer" in text.lower() or "iss" in text.split():
        return "oauth_failed", "The authorization server's issuer check failed."
    if text.startswith("Protected resource"):
        return "oauth_failed", "The server's protected-resource metadata does not match its URL."
    return "oauth_failed", "OAuth discovery or authorization failed."


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
