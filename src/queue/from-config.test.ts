// @module-tag process
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { createDiskProbe } from "../paths/disk-probe.ts";
import { parseConfigText } from "../config/load.ts";
import { systemClock } from "../core/clock.ts";
import { createScanQueue } from "./open-scan-queue.ts";
import { captureLog, makeTempDir } from "../../test/support/capture-log.ts";
import { sharedDiskProbe } from "../paths/shared-disk-probe.ts";
import { dispatcherOptionsFromConfig } from "./dispatch/from-config.ts";
import { scanQueueOptionsFromConfig } from "./from-config.ts";

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
    expect(result.items).toEqual([{ id: 1, folder: "/tv/Show/S01", merged: false }]);
    await queue.close();
    await temp.cleanup();
  });

  it("looks a path of unknown kind up on disk through SERVER_FILE_EXIST_PATH_MAPPINGS before it is queued", async () => {
    const temp = await makeTempDir();
    await mkdir(join(temp.dir, "movies", "The.Matrix.1999.1080p"), { recursive: true });
    await mkdir(join(temp.dir, "movies", "Heat (1995)"), { recursive: true });
    const config = configOf({
      SERVER_PATH_MAPPINGS: { "/data/Movies/": ["/movies/"] },
      SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${join(temp.dir, "movies")}/`]: ["/data/Movies/"] },
    });
    const options = scanQueueOptionsFromConfig({ config, queueFile: `${temp.dir}/queue.db`, clock: systemClock, log });
    expect(options.resolveKind).toBeTypeOf("function");
    const queue = await createScanQueue(options);
    const manual = (path: string) => ({ path, kind: "unknown" as const, source: "Manual", event: "Manual" });
    const result = await queue.enqueue([manual("/data/Movies/The.Matrix.1999.1080p"), manual("/data/Movies/Heat.1995.1080p")]);
    // The first is a folder on disk; the second is nowhere yet: scanned as given. Neither becomes /data/Movies.
    expect(result.items.map((item) => item.folder)).toEqual(["/data/Movies/The.Matrix.1999.1080p", "/data/Movies/Heat.1995.1080p"]);
    await queue.close();
    await temp.cleanup();
  });

  it("gives the file checks the same probe as kind resolution: one budget of stats for the process", () => {
    const config = configOf({});
    const input = { config, queue: {} as never, targets: [], localForms: (p: string) => [p], clock: systemClock, log };
    expect(dispatcherOptionsFromConfig(input).statPath).toBe(sharedDiskProbe(log).stat);
    const probe = createDiskProbe({ log });
    expect(dispatcherOptionsFromConfig({ ...input, disk: probe }).statPath).toBe(probe.stat);
  });
});
