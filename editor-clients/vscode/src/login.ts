// Carrying an OAuth login (`mcp/auth/login`) to its end, wherever its first result came from
// (Log In, Log In Without a Browser, a `/mcp login` line): the question before a login asks
// for more scopes (`needs_approval`, then the login again with the answer), the callback address
// pasted back for a login without a browser (`pending`, then `mcp/auth/completeLogin`), and the
// message of a completed one.
import * as vscode from "vscode";
import type { Ctx } from "./commandContext";
import { describeError } from "./format";
import { decisionOf, loginAfter, type ScopeDecision, type ScopeQuestion, scopeQuestion } from "./loginScopes";
import * as P from "./protocol";

/** For scripts and tests: the pasted address, or a function that gets it from the authorization address, instead of the input box. */
export type LoginCallback = string | ((authorizationUrl: string, redirectUri: string) => Promise<string>);

/** For scripts and tests: the answer to the more-scopes question, or a function that gives it, instead of the modal. */
export type ScopeAnswer =
  | ScopeDecision
  | ((question: ScopeQuestion, result: P.LoginResult) => ScopeDecision | Promise<ScopeDecision>);

export interface LoginAnswers {
  callback?: LoginCallback;
  scopes?: ScopeAnswer;
}

function info(message: string): void {
  void vscode.window.showInformationMessage(`MCP: ${message}`);
}

/** One `mcp/auth/login`; the browser flow under a cancellable notification, since it waits for the redirect. */
export function requestLogin(ctx: Ctx, params: P.LoginParams): Promise<P.LoginResult> {
  if (params.noBrowser) return ctx.client.request(P.authLogin, params);
  return Promise.resolve(
    vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Logging in to ${params.server} in your browser…`,
        cancellable: true,
      },
      (_progress, token) => ctx.client.request(P.authLogin, params, token),
    ),
  );
}

/** The person's answer to a `needs_approval` result: `answer` when given, else the modal's (one that fails is a Cancel). */
export async function askScopes(
  log: vscode.LogOutputChannel,
  result: P.LoginResult,
  answer?: ScopeAnswer,
): Promise<ScopeDecision> {
  const question = scopeQuestion(result);
  if (typeof answer === "string") return answer;
  if (typeof answer === "function") return answer(question, result);
  try {
    const choice = await vscode.window.showWarningMessage(
      question.message,
      { modal: true, detail: question.detail },
      question.approve,
      question.without,
    );
    return decisionOf(choice);
  } catch (error) {
    log.warn(`Could not ask about more scopes for '${result.server}': ${describeError(error).message}`);
    return "cancel";
  }
}

/**
 * Carries `first`, the answer to a login of `params`, to its end and returns the last result:
 * `needs_approval` asks and logs in again with the answer (Cancel sends nothing and returns it),
 * `pending` asks for the callback address (nothing pasted returns it), and a completed login
 * says so and refreshes the servers.
 */
export async function finishLogin(
  ctx: Ctx,
  params: Pick<P.LoginParams, "server" | "noBrowser">,
  first: P.LoginResult,
  answers: LoginAnswers = {},
): Promise<P.LoginResult> {
  let result = first;
  if (result.status === "needs_approval") {
    const next = loginAfter(params, result, await askScopes(ctx.log, result, answers.scopes));
    if (!next) return result; // the sidecar keeps the request until it lapses
    result = await requestLogin(ctx, next);
  }
  if (result.status === "pending" && result.loginId && result.authorizationUrl) {
    return pasteCallback(ctx, result, answers.callback);
  }
  info(result.text);
  await ctx.store.refresh();
  return result;
}

async function pasteCallback(ctx: Ctx, pending: P.LoginResult, callback?: LoginCallback): Promise<P.LoginResult> {
  const { server, loginId, authorizationUrl } = pending;
  if (!loginId || !authorizationUrl) return pending;
  await vscode.env.clipboard.writeText(authorizationUrl);
  const redirect = pending.redirectUri ?? "";
  const callbackUrl =
    typeof callback === "string"
      ? callback
      : typeof callback === "function"
        ? await callback(authorizationUrl, redirect)
        : await vscode.window.showInputBox({
            title: `Log in to ${server} without a browser here`,
            prompt: `The authorization address is on the clipboard: open it in any browser, sign in, then paste the address the browser was sent to (it starts with ${redirect}; the page itself may fail to load).`,
            placeHolder: `${redirect}?code=…&state=…`,
            ignoreFocusOut: true,
            validateInput: (value) =>
              redirect && !value.trim().startsWith(redirect)
                ? `Paste the address that starts with ${redirect}`
                : undefined,
          });
  if (!callbackUrl) return pending;
  const result = await ctx.client.request(P.authCompleteLogin, { loginId, callbackUrl: callbackUrl.trim() });
  info(result.text);
  await ctx.store.refresh();
  return result;
}

/** A `/mcp login` line's result still waiting for the person (`needs_approval`, or `pending` without a browser). */
export function unfinishedLogin(result: P.CommandResult): P.LoginResult | undefined {
  const data = result.data as Partial<P.LoginResult> | null;
  if (result.command !== "login" || !data || typeof data !== "object" || typeof data.server !== "string") {
    return undefined;
  }
  return data.status === "needs_approval" || data.status === "pending" ? (data as P.LoginResult) : undefined;
}
