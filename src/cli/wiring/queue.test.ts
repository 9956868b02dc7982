import pino from "pino";
import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../config/load.ts";
import { systemClock } from "../../core/clock.ts";
import { createScanQueue } from "../../queue/scan-queue.ts";
import { captureLog, makeTempDir } from "../../../test/support/capture-log.ts";
import { dispatcherOptionsFromConfig, scanQueueOptionsFromConfig } from "./queue.ts";

const log = pino({ level: "silent" });
const configOf = (keys: Record<string, unknown>) =>
  parseConfigText(JSON.stringify({ SERVER_PASS: "0123456789abcdef", ...keys }), "/config/config.json", {}).config;

describe("Config → queue and dispatcher options", () => {
  it("maps plex_autoscan's defaults, seconds to milliseconds", () => {
    const config = configOf({});
    const queue = scanQueueOptionsFromConfig({ config, queueFile: "/data/queue.db", clock: systemClock, log });
    expect(queue).toMatchObject({ file: "/data/queue.db", scanDelayMs: 180_000, historyMaxDays: 7, historyMaxRows: 10_000 });
    const dispatcher = dispatcherOptionsFromConfig({
      config,
      queue: {} as never,
      targets: [],
      localForms: (p) => [p],
      clock: systemClock,
      log,
    });
    expect(dispatcher).toMatchObject({
      maxFileChecks: 10,
      fileCheckDelayMs: 60_000,
      scanFolderOnFileExistsExhaustion: false,
      concurrency: 1,
      retryMaxMs: 24 * 3_600_000,
      commands: { before: "", after: "", timeoutMs: 300_000 },
    });
    expect(dispatcher.onFileMissing).toBeUndefined();
  });

  it("passes the user's values and priorities through", async () => {
    const config = configOf({
      SERVER_SCAN_DELAY: 30,
      SERVER_SCAN_PRIORITIES: { "0": ["/Movies/"], "1": ["/TV/"] },
      SERVER_SCAN_CONCURRENCY: 2,
      RUN_COMMAND_AFTER_SCAN: "/scripts/notify.sh",
    });
    const queue = scanQueueOptionsFromConfig({ config, queueFile: "q.db", clock: systemClock, log });
    expect(queue).toMatchObject({ scanDelayMs: 30_000, priorities: { "0": ["/Movies/"], "1": ["/TV/"] } });
    const refreshed: string[] = [];
    const dispatcher = dispatcherOptionsFromConfig({
      config,
      queue: {} as never,
      targets: [],
      localForms: (p) => [p],
      refreshMissing: async (local) => void refreshed.push(local),
      clock: systemClock,
      log,
    });
    expect(dispatcher).toMatchObject({ concurrency: 2, commands: { after: "/scripts/notify.sh" } });
    await dispatcher.onFileMissing?.("/tv/x.mkv", "/mnt/tv/x.mkv");
    expect(refreshed).toEqual(["/mnt/tv/x.mkv"]);

    // Google Drive files are refreshed before every check (the mount may not show them yet); others are not.
    const drive = { path: "/tv/new.mkv", kind: "file", deleted: false, source: "Google Drive", event: "Download" } as const;
    await dispatcher.beforeFileCheck?.(drive, ["/mnt/tv/new.mkv", "/tv/new.mkv"]);
    await dispatcher.beforeFileCheck?.({ ...drive, source: "Sonarr" }, ["/mnt/tv/other.mkv"]);
    expect(refreshed).toEqual(["/mnt/tv/x.mkv", "/mnt/tv/new.mkv", "/tv/new.mkv"]);
  });

  it("opens a working queue from the mapped options", async () => {
    const temp = await makeTempDir();
    const logs = captureLog();
    const options = scanQueueOptionsFromConfig({
      config: configOf({}),
      queueFile: `${temp.dir}/queue.db`,
      clock: systemClock,
      log: logs.log,
    });
    const queue = await createScanQueue(options);
    const result = await queue.enqueue([{ path: "/tv/Show/S01/e.mkv", kind: "file", source: "Sonarr", event: "Download" }]);
    expect(result.items).toEqual([{ folder: "/tv/Show/S01", merged: false }]);
    await queue.close();
    await temp.cleanup();
  });
});
