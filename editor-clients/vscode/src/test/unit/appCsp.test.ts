// The Content Security Policy an MCP App runs under: the specification's default without a
// declaration, declared origins only where they belong, and nothing a server's string could
// add to the policy.
import assert from "node:assert/strict";
import { test } from "node:test";
import { appPolicy, declaredCsp, withPolicy } from "../../appCsp";

function directives(policy: string): Map<string, string> {
  return new Map(
    policy.split("; ").map((d) => {
      const [name, ...values] = d.split(" ");
      return [name ?? "", values.join(" ")];
    }),
  );
}

test("without a declaration the policy is the specification's restrictive default: no network at all", () => {
  const policy = directives(appPolicy(declaredCsp(undefined).csp));
  assert.equal(policy.get("default-src"), "'none'");
  assert.equal(policy.get("script-src"), "'self' 'unsafe-inline'");
  assert.equal(policy.get("style-src"), "'self' 'unsafe-inline'");
  assert.equal(policy.get("img-src"), "'self' data:");
  assert.equal(policy.get("media-src"), "'self' data:");
  assert.equal(policy.get("connect-src"), "'none'");
  assert.equal(policy.get("frame-src"), "'none'");
  assert.equal(policy.get("base-uri"), "'self'");
  assert.equal(policy.get("object-src"), "'none'");
  assert.equal(policy.get("form-action"), "'none'");
});

test("declared origins go to their own directives and nowhere else", () => {
  const { csp, rejected } = declaredCsp({
    csp: {
      connectDomains: ["https://api.example.com", "wss://live.example.com"],
      resourceDomains: ["https://*.cdn.example", "https://cdn.example:8443/"],
      frameDomains: ["https://player.example"],
      baseUriDomains: ["https://base.example"],
    },
  });
  assert.deepEqual(rejected, []);
  const policy = directives(appPolicy(csp));
  assert.equal(policy.get("connect-src"), "https://api.example.com wss://live.example.com");
  for (const name of ["script-src", "style-src", "img-src", "font-src", "media-src"]) {
    assert.match(policy.get(name) ?? "", / https:\/\/\*\.cdn\.example https:\/\/cdn\.example:8443$/, name);
    assert.doesNotMatch(policy.get(name) ?? "", /api\.example|player|base\.example/, name);
  }
  assert.equal(policy.get("frame-src"), "https://player.example");
  assert.equal(policy.get("base-uri"), "https://base.example");
  assert.equal(policy.get("default-src"), "'none'");
});

test("a value that is not a plain origin is refused, so no server string adds a directive or a wildcard", () => {
  const { csp, rejected } = declaredCsp({
    csp: {
      connectDomains: [
        "https://ok.example",
        "https://evil.example; script-src *",
        "*",
        "https://*",
        "data:",
        "javascript:alert(1)",
        "https://x.example/path",
        "'unsafe-eval'",
        "https://a.example 'unsafe-eval'",
        42,
      ],
      resourceDomains: "https://not-a-list.example",
      unknownDomains: ["https://ignored.example"],
    },
  });
  assert.deepEqual(csp, { connectDomains: ["https://ok.example"] });
  assert.equal(rejected.length, 10);
  assert.ok(rejected.includes("connectDomains: https://evil.example; script-src *"));
  assert.ok(rejected.includes("resourceDomains: https://not-a-list.example"));
  const policy = appPolicy(csp);
  assert.doesNotMatch(policy, /evil|unsafe-eval|\*|ignored|not-a-list/);
  assert.equal(policy.split(";").length, 11);
});

test("a csp that is no object is refused whole; duplicates and a trailing slash collapse", () => {
  assert.deepEqual(declaredCsp({ csp: ["https://a.example"] }), {
    csp: {},
    rejected: ['csp: ["https://a.example"]'],
  });
  assert.deepEqual(declaredCsp({ csp: { connectDomains: ["https://a.example", "https://a.example/"] } }).csp, {
    connectDomains: ["https://a.example"],
  });
});

test("the webview page's own script source is added to script-src and style-src only", () => {
  const policy = directives(appPolicy({}, ["https://*.vscode-cdn.net"]));
  assert.equal(policy.get("script-src"), "'self' 'unsafe-inline' https://*.vscode-cdn.net");
  assert.equal(policy.get("style-src"), "'self' 'unsafe-inline' https://*.vscode-cdn.net");
  assert.equal(policy.get("img-src"), "'self' data:");
  assert.equal(policy.get("connect-src"), "'none'");
});

test("the policy goes first into the document, after the doctype, escaped as an attribute", () => {
  const policy = "default-src 'none'";
  const meta = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'">`;
  assert.equal(
    withPolicy("<!DOCTYPE html>\n<html><head><title>x</title></head></html>", policy),
    `<!DOCTYPE html>${meta}\n<html><head><title>x</title></head></html>`,
  );
  assert.equal(
    withPolicy("\uFEFF <!-- built --><!doctype html><html></html>", policy),
    `\uFEFF <!-- built --><!doctype html>${meta}<html></html>`,
  );
  assert.equal(withPolicy("<html><head></head></html>", policy), `${meta}<html><head></head></html>`);
  assert.match(withPolicy("<html></html>", `a "b" <c>`), /content="a &quot;b&quot; &lt;c&gt;"/);
});
