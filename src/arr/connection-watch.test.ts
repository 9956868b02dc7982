import { describe, expect, it, vi } from "vitest";
import { captureLog } from "../../test/support/capture-log.ts";
import { createManualClock } from "../../test/support/manual-clock.ts";
import { AFTER_TEST_MS, createArrConnectionWatch } from "./connection-watch.ts";
import type { ConnectionInspection, ConnectionState } from "./inspect-connection.ts";

const inspection = (state: ConnectionState, detail = `the connection is ${state}.`): ConnectionInspection => ({ state, detail, duplicates: [], missingEvents: [], failing: state === "failing" });

describe("the watch on an app's connection to autoscan", () => {
  it("says a disconnection once (log, notification, problem), stays quiet while it lasts, says once when it is right again; an app it cannot ask changes nothing", async () => {
    const clock = createManualClock();
    const logs = captureLog();
    const answers: (ConnectionInspection | Error)[] = [inspection("ok"), inspection("failing"), inspection("failing"), new Error("ECONNREFUSED"), inspection("ok")];
    const told: string[] = [];
    const watch = createArrConnectionWatch({
      apps: [{ name: "sonarr", inspect: async () => { const next = answers.shift() ?? inspection("ok"); if (next instanceof Error) throw next; return next; } }],
      intervalMs: 60_000,
      clock,
      log: logs.log,
      onDisconnected: (app, detail) => told.push(`${app}: ${detail}`),
    });
    watch.start();
    const round = async (): Promise<void> => clock.advance(60_000);
    await round();
    expect(watch.problems()).toMatchObject([{ app: "sonarr", detail: "the connection is failing." }]);
    await round();
    await round();
    expect(watch.problems()).toHaveLength(1);
    await round();
    expect(watch.problems()).toEqual([]);
    watch.stop();
    expect(told).toEqual(["sonarr: the connection is failing."]);
    const said = logs.records.filter((r) => r.level >= 30).map((r) => r.msg);
    expect(said).toEqual(["sonarr does not send its imports to autoscan: the connection is failing. Fix: autoscan arr connect --app sonarr", "sonarr sends to autoscan again."]);
  });

  it("a webhook from the app ends its warning at once (onReconnected); a look that began before that webhook raises nothing", async () => {
    const clock = createManualClock();
    const logs = captureLog();
    const answer: ConnectionInspection = inspection("missing");
    let release: (() => void) | undefined;
    const told: string[] = [];
    const watch = createArrConnectionWatch({
      apps: [{ name: "sonarr4k", inspect: async () => (release ? new Promise<ConnectionInspection>((resolve) => (release = () => resolve(answer))) : answer) }],
      intervalMs: 60_000,
      clock,
      log: logs.log,
      onDisconnected: (app) => told.push(`down ${app}`),
      onReconnected: (app) => told.push(`up ${app}`),
    });
    expect(await watch.recheck()).toEqual([{ app: "sonarr4k", state: "missing", detail: "the connection is missing.", cleared: false }]);
    watch.heard("SONARR4K");
    expect(watch.problems()).toEqual([]);
    watch.heard("sonarr4k");
    watch.heard("radarr");
    expect(told).toEqual(["down sonarr4k", "up sonarr4k"]);
    // A look under way when the next webhook arrives: what it read is older than the webhook.
    release = () => undefined;
    const looking = watch.recheck("sonarr4k");
    await clock.advance(1);
    watch.heard("sonarr4k");
    release();
    expect(await looking).toMatchObject([{ state: "missing", cleared: false }]);
    expect(watch.problems()).toEqual([]);
    expect(told).toEqual(["down sonarr4k", "up sonarr4k"]);
    expect(watch.recheck("radarr")).toBeUndefined();
    expect(logs.records.filter((r) => r.level >= 30).map((r) => r.msg)).toEqual([
      "sonarr4k does not send its imports to autoscan: the connection is missing. Fix: autoscan arr connect --app sonarr4k",
      "sonarr4k sends to autoscan again: a webhook from it arrived.",
    ]);
  });

  it("unticked events are a note, not a disconnection: one INFO line, no notification; a disconnection before it ends (cleared)", async () => {
    const clock = createManualClock();
    const logs = captureLog();
    const answers = [inspection("wrong-url"), inspection("wrong-events"), inspection("wrong-events"), inspection("ok")];
    const told: string[] = [];
    const changes: number[] = [];
    const watch = createArrConnectionWatch({
      apps: [{ name: "sonarr", inspect: async () => answers.shift() ?? inspection("ok") }],
      intervalMs: 60_000,
      clock,
      log: logs.log,
      onDisconnected: (app) => told.push(`down ${app}`),
      onReconnected: (app) => told.push(`up ${app}`),
    });
    watch.onChange(() => changes.push(watch.problems().length * 10 + watch.notes().length));
    await watch.recheck();
    expect(await watch.recheck()).toMatchObject([{ state: "wrong-events", cleared: true }]);
    expect(watch.problems()).toEqual([]);
    expect(watch.notes()).toMatchObject([{ app: "sonarr", detail: "the connection is wrong-events." }]);
    await watch.recheck();
    await watch.recheck();
    expect(watch.notes()).toEqual([]);
    expect(told).toEqual(["down sonarr", "up sonarr"]);
    expect(changes).toEqual([10, 0, 1, 0]);
    const said = logs.records.filter((r) => r.level >= 30);
    expect(said.map((r) => [r.level, r.msg])).toEqual([
      [40, "sonarr does not send its imports to autoscan: the connection is wrong-url. Fix: autoscan arr connect --app sonarr"],
      [30, "sonarr sends to autoscan again."],
      [30, "sonarr sends to autoscan, with some events unticked: the connection is wrong-events. If that is not on purpose: autoscan arr connect --app sonarr"],
    ]);
  });

  it("a Test from a flagged app asks for one look a few seconds later (the app saves after its test); from an app that is fine, none", async () => {
    const clock = createManualClock();
    const answers = [inspection("disabled"), inspection("ok")];
    let looks = 0;
    const watch = createArrConnectionWatch({
      apps: [{ name: "radarr", inspect: async () => (looks++, answers.shift() ?? inspection("ok")) }],
      intervalMs: 60 * 60_000,
      clock,
      log: captureLog().log,
    });
    watch.tested("radarr");
    await clock.advance(AFTER_TEST_MS);
    expect(looks).toBe(0);
    await watch.recheck();
    expect(watch.problems()).toHaveLength(1);
    watch.tested("radarr");
    watch.tested("radarr");
    await clock.advance(AFTER_TEST_MS - 1);
    expect(looks).toBe(1);
    await clock.advance(1);
    await vi.waitFor(() => expect(watch.problems()).toEqual([]));
    expect(looks).toBe(2);
    watch.stop();
  });
});
