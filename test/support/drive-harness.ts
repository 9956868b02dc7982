import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock, type Clock } from "../../src/core/clock.ts";
import type { ScanRequest, ScanSink } from "../../src/core/scan.ts";
import { connectDrive, type DriveCredentials } from "../../src/drive/credentials.ts";
import { openDriveStateStore } from "../../src/drive/drive-store.ts";
import type { DriveFilterOptions } from "../../src/drive/filters.ts";
import { createDriveMonitor, type DriveMonitor } from "../../src/drive/poller.ts";
import { SCOPE_METADATA_READONLY, SCOPE_READONLY } from "../../src/drive/scope.ts";
import { createTokenStore, type TokenStore } from "../../src/drive/token-store.ts";
import { createLogger } from "../../src/logging/create-logger.ts";
import { createPathMapper, type PathMappings } from "../../src/paths/mapping.ts";
import { startFakeGoogle, type FakeGoogle } from "./fake-google.ts";

/**
 * Builds the Drive monitor the way the server does, against the fake Google, with a temp data dir, a recording
 * sink and captured JSON log lines. Time is a clock that records waits and returns at once (retries, backoff).
 */
const LEVEL_NUMBERS: Readonly<Record<string, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

export const CLIENT_ID = "1234567890-test.apps.googleusercontent.com";
export const CLIENT_SECRET = "GOCSPX-test-secret";

export interface HarnessOptions {
  readonly sharedDrives?: readonly string[];
  readonly scope?: string;
  readonly filter?: Partial<DriveFilterOptions>;
  readonly mappings?: PathMappings;
  readonly pageSize?: number;
  readonly inLibrary?: (path: string, size?: number) => Promise<boolean>;
  readonly credentials?: (h: { google: FakeGoogle; dir: string; tokenStore: TokenStore }) => DriveCredentials;
  readonly google?: FakeGoogle;
  readonly dir?: string;
  /** Real time and this poll interval (the loop test); otherwise waits return at once. */
  readonly realTimeIntervalMs?: number;
}

export interface Harness {
  readonly google: FakeGoogle;
  readonly dir: string;
  readonly tokenStore: TokenStore;
  readonly monitor: DriveMonitor;
  readonly batches: ScanRequest[][];
  readonly lines: Record<string, unknown>[];
  readonly sleeps: number[];
  readonly secrets: string[];
  /** Makes the sink refuse the next `n` batches. */
  refuseNext(n: number): void;
  /** Makes the sink refuse every batch once it has accepted `n` in all. */
  refuseAfter(n: number): void;
  scanned(): string[];
  messages(): string[];
  /** A second monitor over the same data dir and fake (a restart). */
  restart(): Promise<Harness>;
  close(): Promise<void>;
}

export async function createDriveHarness(options: HarnessOptions = {}): Promise<Harness> {
  const google = options.google ?? (await startFakeGoogle());
  google.addClient(CLIENT_ID, CLIENT_SECRET);
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), "autoscan-drive-")));
  const tokenStore = createTokenStore({ path: join(dir, "drive-token.json") });
  const shared = (options.sharedDrives?.length ?? 0) > 0;
  if (!options.dir && !options.credentials) {
    const refresh = google.issueRefreshToken(CLIENT_ID, options.scope ?? (shared ? SCOPE_READONLY : SCOPE_METADATA_READONLY));
    await tokenStore.save({ clientId: CLIENT_ID, refreshToken: refresh });
  }
  const lines: Record<string, unknown>[] = [];
  const { log } = createLogger({
    level: "debug",
    format: "json",
    // JSON lines say the level as a word; the tests compare pino's numbers.
    stream: {
      write: (line: string) => {
        const record = JSON.parse(line) as Record<string, unknown>;
        lines.push({ ...record, level: LEVEL_NUMBERS[String(record.level)] ?? record.level });
      },
    },
  });
  const sleeps: number[] = [];
  const instant: Clock = { now: () => Date.now(), sleep: async (ms) => void sleeps.push(ms) };
  const clock = options.realTimeIntervalMs ? systemClock : instant;
  const batches: ScanRequest[][] = [];
  const secrets: string[] = [];
  let refusals = 0;
  let limit = Infinity;
  const sink: ScanSink = async (requests) => {
    if (batches.length >= limit) throw new Error("queue unavailable");
    if (refusals > 0) {
      refusals--;
      throw new Error("queue unavailable");
    }
    batches.push([...requests]);
    return { items: requests.map((r) => ({ folder: r.path.slice(0, r.path.lastIndexOf("/")), merged: false })) };
  };
  const credentials = options.credentials?.({ google, dir, tokenStore }) ?? { kind: "oauth", clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, tokenStore };
  const monitor = createDriveMonitor({
    connect: (signal) =>
      connectDrive(
        {
          credentials,
          endpoints: { apiRootUrl: google.url, tokenUrl: google.tokenUrl, authUrl: google.authUrl },
          scopeNeeds: { sharedDrives: shared },
          clock,
          log: log.child({ component: "GOOGLE" }),
          onSecret: (value) => secrets.push(value),
          pageSize: options.pageSize,
          random: () => 0.5,
        },
        signal,
      ),
    openStore: () => openDriveStateStore({ path: join(dir, "cache.db"), log }),
    sink,
    isInLibrary: options.inLibrary ?? (async () => false),
    mapper: createPathMapper({ mappings: options.mappings ?? { "/data/Media/": ["My Drive/Media/"] } }),
    filter: {
      filePaths: ["My Drive/Media/"],
      fileExtensions: true,
      fileExtensionsList: ["mkv", "mp4", "avi"],
      mimeTypes: false,
      mimeTypesList: [],
      ...options.filter,
    },
    pollIntervalMs: options.realTimeIntervalMs ?? 60_000,
    sharedDrives: options.sharedDrives ?? [],
    showCacheLogs: true,
    log: log.child({ component: "GOOGLE" }),
    clock,
  });
  const harness: Harness = {
    google,
    dir,
    tokenStore,
    monitor,
    batches,
    lines,
    sleeps,
    secrets,
    refuseNext: (n) => void (refusals = n),
    refuseAfter: (n) => void (limit = n),
    scanned: () => batches.flat().map((r) => r.path),
    messages: () => lines.map((l) => String(l.msg)),
    restart: async () => {
      await monitor.stop();
      return createDriveHarness({ ...options, google, dir });
    },
    close: async () => {
      await monitor.stop();
      await google.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return harness;
}
