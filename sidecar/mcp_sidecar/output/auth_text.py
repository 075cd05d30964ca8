"""The sentences a login or a logout answers with, for the person who asked for it."""

from __future__ import annotations


def logged_in(server: str, scopes: list[str]) -> str:
    granted = f" (scopes: {' '.join(scopes)})" if scopes else ""
    return f"{server}: logged in{granted}. Tokens are stored in the OS keyring."


def scopes_to_approve(server: str, extra: list[str]) -> str:
    """A step-up asks for scopes the server was never granted: the person decides."""
    return (
        f"{server} asks for scopes it was not granted: {' '.join(extra)}. "
        "Logging in with them gives it more access than it has now: approve them, or log in without them."
    )


def paste_instructions(server: str, url: str, redirect_uri: str, login_id: str) -> str:
    """The no-browser flow: where to authorize, and what to paste back."""
    return (
        f"Open this address in a browser and authorize {server}:\n{url}\n"
        f"Then paste the address the browser was sent to (it starts with {redirect_uri}) "
        f"into completeLogin (login id {login_id})."
    )


def logged_out(server: str, revocation: str, registration_only: bool) -> str:
    """`registration_only`: no tokens were stored, but a client registration was, and is removed."""
    if revocation == "none" and registration_only:
        return f"{server}: removed the stored client registration (no tokens were stored)."
    texts = {
        "none": f"{server}: no stored credentials.",
        "accepted": f"{server}: logged out; the authorization server revoked the tokens.",
        "unsupported": f"{server}: logged out locally; the authorization server offers no revocation.",
        "unconfirmed": f"{server}: logged out locally; revocation at the authorization server was not confirmed.",
    }
    return texts[revocation]
