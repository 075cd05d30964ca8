// Bundles the extension (dist/extension.js, `vscode` external) and, with --tests, the unit
// tests (dist-test/unit/*.test.js, run by `node --test`) and the extension-host suite
// (dist-test/e2e/index.js), the installer test (dist-test/install/wheel.test.js), and the test
// language model extension (dist-test/fake-lm/, installed into the test VS Code only).

import { copyFileSync, mkdirSync, readdirSync } from "node:fs";
import { build } from "esbuild";

const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  sourcemap: true,
  logLevel: "warning",
};

await build({
  ...common,
  entryPoints: ["src/extension.ts"],
  outfile: "dist/extension.js",
  external: ["vscode"],
  minify: process.argv.includes("--production"),
});

if (process.argv.includes("--tests")) {
  const unit = readdirSync("src/test/unit")
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => `src/test/unit/${f}`);
  await build({ ...common, entryPoints: unit, outdir: "dist-test/unit", external: ["vscode"] });
  await build({
    ...common,
    entryPoints: ["src/test/e2e/index.ts"],
    outfile: "dist-test/e2e/index.js",
    external: ["vscode"],
  });
  await build({
    ...common,
    entryPoints: ["src/test/install/wheel.test.ts"],
    outfile: "dist-test/install/wheel.test.js",
  });
  mkdirSync("dist-test/fake-lm", { recursive: true });
  copyFileSync("src/test/fake-lm/package.json", "dist-test/fake-lm/package.json");
  await build({
    ...common,
    entryPoints: ["src/test/fake-lm/extension.ts"],
    outfile: "dist-test/fake-lm/extension.js",
    external: ["vscode"],
    sourcemap: false,
  });
}
