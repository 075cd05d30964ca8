import assert from "node:assert/strict";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, test } from "node:test";
import {
  absolutePathDirs,
  binaryIdentity,
  bundledWheel,
  identityKey,
  type KeyValueStore,
  locateSidecar,
  sidecarArgs,
  venvSidecar,
  WORKSPACE_SIDECARS_KEY,
  WorkspaceSidecarConsent,
  workspaceSidecarQuestion,
} from "../../locate";

function executable(file: string): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, "#!/bin/sh\n");
  chmodSync(file, 0o755);
  return file;
}

const base = mkdtempSync(path.join(tmpdir(), "mcp-locate-"));
after(() => rmSync(base, { recursive: true, force: true }));
const workspace = path.join(base, "ws");
const pathDir = path.join(base, "pathbin");
const privateVenv = path.join(base, "storage", "venv");
const settingBinary = executable(path.join(base, "custom", "mcp-sidecar"));
const workspaceBinary = executable(venvSidecar(path.join(workspace, ".venv"), "linux"));
const pathBinary = executable(path.join(pathDir, "mcp-sidecar"));
const privateBinary = executable(venvSidecar(privateVenv, "linux"));
const input = {
  settingPath: "",
  workspaceFolders: [workspace],
  trusted: true,
  envPath: `/nonexistent${path.delimiter}${pathDir}`,
  privateVenv,
  platform: "linux" as const,
};

const yes = async () => true;
const no = async () => false;

test("the setting wins, then the confirmed workspace .venv, then PATH, then the private venv", async () => {
  assert.deepEqual(await locateSidecar({ ...input, settingPath: settingBinary, confirmWorkspace: yes }), {
    found: true,
    command: settingBinary,
    source: "setting",
  });
  const asked: string[] = [];
  const confirmWorkspace = async (candidate: string) => {
    asked.push(candidate);
    return true;
  };
  assert.deepEqual(await locateSidecar({ ...input, confirmWorkspace }), {
    found: true,
    command: workspaceBinary,
    source: "workspace",
  });
  assert.deepEqual(asked, [workspaceBinary], "asked about the workspace's binary by its path");
  assert.deepEqual(await locateSidecar({ ...input, workspaceFolders: [], confirmWorkspace }), {
    found: true,
    command: pathBinary,
    source: "path",
  });
  assert.deepEqual(await locateSidecar({ ...input, workspaceFolders: [], envPath: "" }), {
    found: true,
    command: privateBinary,
    source: "private",
  });
});

test("an untrusted workspace's .venv is never run, nor asked about", async () => {
  const asked: string[] = [];
  const located = await locateSidecar({
    ...input,
    trusted: false,
    confirmWorkspace: async (c) => {
      asked.push(c);
      return true;
    },
  });
  assert.deepEqual(located, { found: true, command: pathBinary, source: "path" });
  assert.deepEqual(asked, []);
});

test("a trusted workspace's .venv runs only when confirmed: declining (or failing to ask) falls back to PATH", async () => {
  assert.deepEqual(
    await locateSidecar(input),
    { found: true, command: pathBinary, source: "path" },
    "no way to ask: not used",
  );
  assert.deepEqual(await locateSidecar({ ...input, confirmWorkspace: no }), {
    found: true,
    command: pathBinary,
    source: "path",
  });
  const broken = async (): Promise<boolean> => {
    throw new Error("no dialog");
  };
  assert.deepEqual(await locateSidecar({ ...input, confirmWorkspace: broken }), {
    found: true,
    command: pathBinary,
    source: "path",
  });
  assert.deepEqual(await locateSidecar({ ...input, envPath: "", confirmWorkspace: no }), {
    found: true,
    command: privateBinary,
    source: "private",
  });
});

test("relative PATH entries are skipped: they resolve against the workspace", async () => {
  // The extension host's working directory is the workspace; it ships its own binaries.
  const repo = path.join(base, "repo");
  executable(path.join(repo, "mcp-sidecar"));
  executable(path.join(repo, "node_modules", ".bin", "mcp-sidecar"));
  const cwd = process.cwd();
  process.chdir(repo);
  try {
    for (const envPath of [
      ".",
      "node_modules/.bin",
      `${path.delimiter}${path.delimiter}`,
      `.${path.delimiter}node_modules/.bin${path.delimiter}`,
    ]) {
      assert.deepEqual(
        await locateSidecar({ ...input, workspaceFolders: [], envPath }),
        { found: true, command: privateBinary, source: "private" },
        envPath,
      );
    }
    assert.deepEqual(await locateSidecar({ ...input, workspaceFolders: [], envPath: `.${path.delimiter}${pathDir}` }), {
      found: true,
      command: pathBinary,
      source: "path",
    });
  } finally {
    process.chdir(cwd);
  }
  assert.deepEqual(absolutePathDirs("/usr/bin::.:bin:./x:/opt/y:~/z", "linux"), ["/usr/bin", "/opt/y"]);
  assert.deepEqual(
    absolutePathDirs('C:\\Python\\Scripts;.;node_modules\\.bin;\\rootless;"D:\\quoted";\\\\host\\share', "win32"),
    ["C:\\Python\\Scripts", "D:\\quoted", "\\\\host\\share"],
  );
  assert.deepEqual(absolutePathDirs(undefined, "linux"), []);
});

test("a setting that names no executable is reported, not skipped", async () => {
  const located = await locateSidecar({ ...input, settingPath: path.join(base, "missing") });
  assert.equal(located.found, false);
  assert.match(
    !located.found ? (located.problem ?? "") : "",
    /mcpSidecar\.path setting names .*missing, which is not an executable file/,
  );
});

test("nothing found anywhere", async () => {
  assert.deepEqual(
    await locateSidecar({ ...input, workspaceFolders: [], envPath: "", privateVenv: path.join(base, "none") }),
    { found: false },
  );
});

/** The key the consent stores for a binary that exists. */
function storedKey(file: string): string {
  const identity = binaryIdentity(file);
  assert.ok(identity, `${file} is a file`);
  return identityKey(identity);
}

/** VS Code's globalState, in memory. */
function memento(): KeyValueStore & { data: Map<string, unknown> } {
  const data = new Map<string, unknown>();
  return {
    data,
    get: <T>(key: string) => data.get(key) as T | undefined,
    update: async (key: string, value: unknown) => void data.set(key, value),
  };
}

test("a workspace sidecar is asked about once per binary; a replaced or rewritten binary asks again", async () => {
  const venv = path.join(base, "consent", ".venv");
  const binary = executable(venvSidecar(venv, "linux"));
  const store = memento();
  const asked: { candidate: string; realPath: string; size: number }[] = [];
  let answer = true;
  const consent = new WorkspaceSidecarConsent(store, async (candidate, id) => {
    asked.push({ candidate, realPath: id.realPath, size: id.size });
    return answer;
  });

  assert.equal(await consent.confirm(binary), true);
  assert.deepEqual(asked, [{ candidate: binary, realPath: realpathSync(binary), size: 10 }]);
  assert.deepEqual(
    store.data.get(WORKSPACE_SIDECARS_KEY),
    [storedKey(binary)],
    "remembered by real path, size and mtime",
  );
  assert.equal(await consent.confirm(binary), true);
  assert.equal(asked.length, 1, "not asked twice");
  // Another window (a new consent object over the same global state) does not ask either.
  assert.equal(await new WorkspaceSidecarConsent(store, async () => assert.fail("asked again")).confirm(binary), true);

  // Rewritten in place (same size, new mtime), or replaced with other contents: asked again.
  writeFileSync(binary, "#!/bin/sh\n");
  utimesSync(binary, new Date(), new Date(Date.now() + 5000));
  answer = false;
  assert.equal(await consent.confirm(binary), false);
  assert.equal(asked.length, 2);
  assert.equal(await consent.confirm(binary), false, "a refusal holds for this window");
  assert.equal(asked.length, 2, "and is not asked again");
  consent.forgetRefusals();
  answer = true;
  assert.equal(await consent.confirm(binary), true);
  assert.equal(asked.length, 3);
  assert.deepEqual(store.data.get(WORKSPACE_SIDECARS_KEY), [storedKey(binary)], "one entry per real path");
  writeFileSync(binary, "#!/bin/sh\necho replaced\n");
  assert.equal(await consent.confirm(binary), true);
  assert.equal(asked.length, 4, "other contents ask again");
});

test("a link is confirmed as the file it points to; a question that fails or a file changed meanwhile is a no", async () => {
  const target = executable(path.join(base, "linked", "real-sidecar"));
  const venv = path.join(base, "linking", ".venv");
  mkdirSync(path.join(venv, "bin"), { recursive: true });
  const link = venvSidecar(venv, "linux");
  symlinkSync(target, link);
  const store = memento();
  let seen: string | undefined;
  assert.equal(
    await new WorkspaceSidecarConsent(store, async (_c, id) => {
      seen = id.realPath;
      return true;
    }).confirm(link),
    true,
  );
  assert.equal(seen, realpathSync(target));
  // Retargeting the link to another binary asks again.
  const other = executable(path.join(base, "linked", "other-sidecar"));
  writeFileSync(other, "#!/bin/sh\nexit 1\n");
  rmSync(link);
  symlinkSync(other, link);
  let asked = 0;
  assert.equal(
    await new WorkspaceSidecarConsent(store, async () => {
      asked++;
      return false;
    }).confirm(link),
    false,
  );
  assert.equal(asked, 1);

  const failing = new WorkspaceSidecarConsent(memento(), async () => {
    throw new Error("DialogService: refused to show dialog in tests");
  });
  assert.equal(await failing.confirm(link), false);
  const swapped = new WorkspaceSidecarConsent(memento(), async () => {
    writeFileSync(other, "#!/bin/sh\necho swapped while asking\n");
    return true;
  });
  assert.equal(await swapped.confirm(link), false, "what was shown is what is confirmed");
  assert.equal(
    await new WorkspaceSidecarConsent(memento(), yes).confirm(path.join(base, "none", "mcp-sidecar")),
    false,
    "no file, no consent",
  );
});

test("the question names the workspace's binary and where a link points", () => {
  const q = workspaceSidecarQuestion("/w/.venv/bin/mcp-sidecar", "/opt/x/bin/mcp-sidecar");
  assert.equal(q.message, "Start the mcp-sidecar that this workspace's .venv contains?");
  assert.ok(q.detail.startsWith("/w/.venv/bin/mcp-sidecar\n(a link to /opt/x/bin/mcp-sidecar)\n\n"), q.detail);
  assert.match(q.detail, /start it only if you created this virtual environment yourself/);
  assert.match(q.detail, /Cancel uses mcp-sidecar from PATH or the extension's own copy instead\./);
  const plain = workspaceSidecarQuestion("/w/a\nb\u202e/.venv/bin/mcp-sidecar", "/w/a\nb\u202e/.venv/bin/mcp-sidecar");
  assert.ok(plain.detail.startsWith("/w/a b/.venv/bin/mcp-sidecar\n\n"), plain.detail);
});

test("the newest bundled wheel is chosen", () => {
  const ext = path.join(base, "ext");
  mkdirSync(path.join(ext, "bundled"), { recursive: true });
  assert.equal(bundledWheel(path.join(base, "none")), undefined);
  for (const name of ["mcp_sidecar-0.1.0-py3-none-any.whl", "mcp_sidecar-0.2.0-py3-none-any.whl", "other-1.0.whl"])
    writeFileSync(path.join(ext, "bundled", name), "");
  assert.equal(bundledWheel(ext), path.join(ext, "bundled", "mcp_sidecar-0.2.0-py3-none-any.whl"));
});

test("the log level maps onto -v flags", () => {
  assert.deepEqual(sidecarArgs("warning", undefined), ["serve"]);
  assert.deepEqual(sidecarArgs("info", undefined), ["-v", "serve"]);
  assert.deepEqual(sidecarArgs("debug", "/tmp/x.log"), ["-vv", "--log-file", "/tmp/x.log", "serve"]);
});
