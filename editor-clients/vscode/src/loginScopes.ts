// The question a login asks before it requests more scopes than the server has now. A tool
// call refused with 403 insufficient_scope fails; the sidecar keeps the scopes the server
// asked for (ten minutes) and never opens a browser for them by itself: the next login answers
// `needs_approval` until the person chose. Pure (no `vscode`), unit-tested; `login.ts` shows it.
import type { LoginParams, LoginResult } from "./protocol";
import { stripControls } from "./sanitize";

export const APPROVE_SCOPES = "Approve and Log In";
export const WITHOUT_SCOPES = "Log In Without Them";

/** Ask for the extra scopes too, log in without them (the request is dropped), or send nothing. */
export type ScopeDecision = "approve" | "without" | "cancel";

export interface ScopeQuestion {
  message: string;
  detail: string;
  approve: string;
  without: string;
}

function line(text: string): string {
  return stripControls(text).replace(/\s+/g, " ").trim();
}

function lapse(seconds: number | undefined): string {
  if (seconds === undefined) return "";
  if (seconds < 60) return ` for ${seconds} more second${seconds === 1 ? "" : "s"}`;
  const minutes = Math.ceil(seconds / 60);
  return ` for ${minutes} more minute${minutes === 1 ? "" : "s"}`;
}

/** The modal for a `needs_approval` login result: the server, the extra scopes, every scope asked for. */
export function scopeQuestion(result: LoginResult): ScopeQuestion {
  const server = line(result.server);
  const extra = (result.extraScopes ?? []).map(line);
  const every = (result.scopes ?? []).map(line);
  const them = extra.length === 1 ? "it" : "them";
  const detail = [
    `${server} asks for ${extra.length === 1 ? "a scope" : "scopes"} it was not granted: ${extra.join(", ")}.`,
    "",
    `Logging in with ${them} gives ${server} more access than it has now.`,
    every.length > 0 ? `The login would ask for: ${every.join(", ")}.` : "",
    "",
    `${APPROVE_SCOPES} asks for ${them} too. ${WITHOUT_SCOPES} logs in with the access it has and forgets the request. ` +
      `Cancel does nothing; the request is kept${lapse(result.expiresInSeconds)}.`,
  ];
  return {
    message: `${server} asks for more access: ${extra.join(", ")}`,
    detail: detail.filter((l, i) => l !== "" || detail[i - 1] !== "").join("\n"),
    approve: APPROVE_SCOPES,
    without: WITHOUT_SCOPES,
  };
}

/** The modal's answer (undefined: Cancel or Escape). */
export function decisionOf(choice: string | undefined): ScopeDecision {
  return choice === APPROVE_SCOPES ? "approve" : choice === WITHOUT_SCOPES ? "without" : "cancel";
}

/**
 * The login to send after the person chose: the same server and `noBrowser`, with the extra
 * scopes exactly as the sidecar named them (approve) or none (without). Undefined: Cancel, send nothing.
 */
export function loginAfter(
  params: Pick<LoginParams, "server" | "noBrowser">,
  result: LoginResult,
  decision: ScopeDecision,
): LoginParams | undefined {
  if (decision === "cancel") return undefined;
  const next: LoginParams = { server: params.server };
  if (params.noBrowser) next.noBrowser = true;
  next.approveScopes = decision === "approve" ? [...(result.extraScopes ?? [])] : [];
  return next;
}
