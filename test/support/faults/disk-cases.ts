import { rm } from "node:fs/promises";
import { join } from "node:path";
import { expect } from "vitest";
import { eventually, health, pendingFolders, sendScan, startServer, type AutoscanServer, type Ledger, type ServerSetup } from "./autoscan-server.ts";
import { cleanupMounts, freshDir, mountTmpfs } from "./mounts.ts";

/**
 * The steps the data-disk fault cases share: start the real server (remembered for cleanup), send requests and
 * keep the ledger, wait for /health, kill -9 and restart, and compare the restored queue with the ledger.
 */
export const MEDIA = "/srv/media/tv";
const TMPFS_BYTES = 400 * 1024;

const servers: AutoscanServer[] = [];
const roots: string[] = [];

/** For `afterAll`: kills every server started here, removes every mount and temp folder. */
export async function cleanupCases(): Promise<void> {
  await Promise.all(servers.map((server) => server.kill9()));
  cleanupMounts();
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
}

/** A temp folder removed by `cleanupCases`. */
export async function caseRoot(name: string): Promise<string> {
  const root = await freshDir(`autoscan-faults-${name}-`);
  roots.push(root);
  return root;
}

export async function setupOnTmpfs(name: string, extra: Partial<ServerSetup> = {}): Promise<ServerSetup> {
  const root = await caseRoot(name);
  const dataDir = join(root, "data");
  mountTmpfs(dataDir, TMPFS_BYTES);
  return { dataDir, configDir: join(root, "config"), mediaRoot: MEDIA, ...extra };
}

export async function start(setup: ServerSetup, options: { waitHealthy?: boolean } = {}): Promise<AutoscanServer> {
  return startServer(setup, { ...options, onSpawn: (server) => servers.push(server) });
}

/** The process must not have died by itself. */
export function expectAlive(server: AutoscanServer): void {
  expect(server.exited(), `the server died: ${JSON.stringify(server.how())}\n${server.output().slice(-3000)}`).toBe(false);
}

/** Sends requests one at a time until `refusals` in a row are refused (or `max` are sent); returns the first refusal. */
export async function sendUntilRefused(
  server: AutoscanServer,
  ledger: Ledger,
  options: { max?: number; refusals?: number; padding?: number } = {},
): Promise<string | undefined> {
  let inRow = 0;
  let first: string | undefined;
  for (let i = 0; i < (options.max ?? 200); i++) {
    const outcome = ledger.record(await sendScan(server, MEDIA, ledger.take(), { padding: options.padding ?? 0 }));
    if (outcome.status === "none") throw new Error(`no answer: ${outcome.error}\n${server.output().slice(-3000)}`);
    if (outcome.status >= 200 && outcome.status < 300) {
      inRow = 0;
      continue;
    }
    // Refused: never a 500, always the 503 that tells the sender to retry.
    expect(outcome.status, outcome.body).toBe(503);
    first ??= outcome.body;
    if (++inRow >= (options.refusals ?? 3)) return first;
  }
  return first;
}

/** Sends `count` requests that must all be answered 2xx. */
export async function sendAccepted(server: AutoscanServer, ledger: Ledger, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const outcome = ledger.record(await sendScan(server, MEDIA, ledger.take()));
    expect(outcome.status, `request ${String(outcome.n)}: ${"body" in outcome ? outcome.body : outcome.error}`).toBe(200);
  }
}

export async function expectHealth(server: AutoscanServer, status: 200 | 503, what: string): Promise<void> {
  await eventually(async () => (await health(server)).status === status, { timeoutMs: 20_000, what, output: server.output });
}

/** Kill -9, start again on the same data directory, and check the ledger against what the new process restored. */
export async function restartAndCheck(server: AutoscanServer, setup: ServerSetup, ledger: Ledger): Promise<AutoscanServer> {
  await server.kill9();
  const next = await start(setup);
  const delivered = await pendingFolders(next);
  expect(ledger.problems(MEDIA, delivered)).toEqual([]);
  return next;
}
