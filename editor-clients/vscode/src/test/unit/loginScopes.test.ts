// The question before a login asks for more scopes (`needs_approval`), the modal's answers,
// and the login sent after each.
import assert from "node:assert/strict";
import { test } from "node:test";
import { APPROVE_SCOPES, decisionOf, loginAfter, scopeQuestion, WITHOUT_SCOPES } from "../../loginScopes";
import type { LoginResult } from "../../protocol";

const asked: LoginResult = {
  server: "secure",
  status: "needs_approval",
  extraScopes: ["admin"],
  scopes: ["mcp", "admin"],
  expiresInSeconds: 598,
  text: "secure asks for scopes it was not granted: admin.",
};

test("the modal names the server, the extra scopes, every scope asked for and how long the request is kept", () => {
  const q = scopeQuestion(asked);
  assert.equal(q.message, "secure asks for more access: admin");
  assert.equal(
    q.detail,
    [
      "secure asks for a scope it was not granted: admin.",
      "",
      "Logging in with it gives secure more access than it has now.",
      "The login would ask for: mcp, admin.",
      "",
      "Approve and Log In asks for it too. Log In Without Them logs in with the access it has and forgets the request. " +
        "Cancel does nothing; the request is kept for 10 more minutes.",
    ].join("\n"),
  );
  assert.deepEqual([q.approve, q.without], [APPROVE_SCOPES, WITHOUT_SCOPES]);
});

test("several scopes read as a list; a request about to lapse counts seconds; no scope list, no line", () => {
  const q = scopeQuestion({ ...asked, extraScopes: ["admin", "write:all"], scopes: undefined, expiresInSeconds: 1 });
  assert.equal(q.message, "secure asks for more access: admin, write:all");
  assert.match(q.detail, /^secure asks for scopes it was not granted: admin, write:all\.\n\n/);
  assert.match(q.detail, /asks for them too/);
  assert.match(q.detail, /kept for 1 more second\.$/);
  assert.doesNotMatch(q.detail, /would ask for/);
  assert.doesNotMatch(q.detail, /\n\n\n/);
  assert.match(scopeQuestion({ ...asked, expiresInSeconds: 61 }).detail, /kept for 2 more minutes\.$/);
  assert.match(scopeQuestion({ ...asked, expiresInSeconds: undefined }).detail, /the request is kept\.$/);
});

test("server text is one plain line in the modal: no controls, no line breaks, no terminal sequences", () => {
  const q = scopeQuestion({
    ...asked,
    server: "se\u001b[31mcure",
    extraScopes: ["ad\nmin", "\u202eevil"],
    scopes: ["mcp"],
  });
  assert.equal(q.message, "secure asks for more access: ad min, evil");
  assert.ok(!q.detail.includes("\u001b") && !q.detail.includes("\u202e"), q.detail);
});

test("the modal's answers: its two buttons, and Cancel or Escape (undefined)", () => {
  assert.equal(decisionOf(APPROVE_SCOPES), "approve");
  assert.equal(decisionOf(WITHOUT_SCOPES), "without");
  assert.equal(decisionOf(undefined), "cancel");
  assert.equal(decisionOf("Cancel"), "cancel");
});

test("the login after the answer: the same server and noBrowser, the scopes as the sidecar named them, or none", () => {
  const odd = { ...asked, extraScopes: ["ad\nmin"] };
  assert.deepEqual(loginAfter({ server: "secure" }, odd, "approve"), { server: "secure", approveScopes: ["ad\nmin"] });
  assert.deepEqual(loginAfter({ server: "secure", noBrowser: true }, asked, "approve"), {
    server: "secure",
    noBrowser: true,
    approveScopes: ["admin"],
  });
  assert.deepEqual(loginAfter({ server: "secure", noBrowser: true }, asked, "without"), {
    server: "secure",
    noBrowser: true,
    approveScopes: [],
  });
  assert.equal(loginAfter({ server: "secure" }, asked, "cancel"), undefined, "Cancel sends nothing");
});
