import { describe, expect, it } from "vitest";
import { captureLog } from "../../test/support/capture-log.ts";
import { createManualClock } from "../../test/support/manual-clock.ts";
import { createArrConnectionWatch } from "./connection-watch.ts";
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
});
