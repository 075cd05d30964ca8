import assert from "node:assert/strict";
import { test } from "node:test";
import { Backoff, Serializer } from "../../serial";

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

test("restarts run one at a time and a burst collapses into one queued run", async () => {
  const serializer = new Serializer();
  const log: string[] = [];
  const gate = deferred();
  const first = serializer.run(async () => {
    log.push("start 1");
    await gate.promise;
    log.push("end 1");
  });
  const queued = [2, 3, 4].map((n) => serializer.run(async () => void log.push(`run ${n}`)));
  assert.equal(serializer.busy, true);
  assert.equal(queued[0], queued[1], "later requests share the queued run");
  gate.resolve();
  await Promise.all([first, ...queued]);
  assert.deepEqual(log, ["start 1", "end 1", "run 2"]);
  assert.equal(serializer.busy, false);
});

test("a failed run does not block the queued one", async () => {
  const serializer = new Serializer();
  const failing = serializer.run(async () => {
    throw new Error("boom");
  });
  let ran = false;
  const next = serializer.run(async () => {
    ran = true;
  });
  await assert.rejects(failing, /boom/);
  await next;
  assert.ok(ran);
});

test("backoff doubles up to the cap, gives up, and resets after a stable run", () => {
  let now = 1_000_000;
  const backoff = new Backoff(1000, 4000, 60_000, 4, () => now);
  backoff.started();
  assert.deepEqual(
    [backoff.nextDelay(), backoff.nextDelay(), backoff.nextDelay(), backoff.nextDelay()],
    [1000, 2000, 4000, 4000],
  );
  assert.equal(backoff.nextDelay(), undefined);
  backoff.started();
  now += 60_000;
  assert.equal(backoff.nextDelay(), 1000);
  backoff.reset();
  assert.equal(backoff.nextDelay(), 1000);
});
