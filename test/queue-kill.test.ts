import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { createScanQueue } from "../src/queue/open-scan-queue.ts";
import { captureLog, makeTempDir } from "./support/capture-log.ts";
import { createManualClock } from "./support/manual-clock.ts";

const CHILD = fileURLToPath(new URL("./support/queue-kill-child.ts", import.meta.url));
const TOTAL = 2_000;

/** A small seeded generator, so a failing run can be replayed with its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Round {
  readonly acked: number[];
  readonly finished: boolean;
}

/** Runs the child from `start`; kills it after `killAfterAcks` acks, or `killAfterMs`, whichever comes first. */
function runChild(file: string, start: number, killAfterAcks = Infinity, killAfterMs = 30_000): Promise<Round> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, file, String(start), String(TOTAL), "5"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const acked: number[] = [];
    let finished = false;
    let stderr = "";
    const kill = (): void => void child.kill("SIGKILL");
    const timer = setTimeout(kill, killAfterMs);
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (line === "done") finished = true;
      if (!line.startsWith("ack ")) return;
      acked.push(Number(line.slice(4)));
      if (acked.length >= killAfterAcks) kill();
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (signal !== "SIGKILL" && code !== 0) reject(new Error(`child exited with ${String(code)}: ${stderr}`));
      else resolve({ acked, finished });
    });
  });
}

async function pendingFolders(file: string): Promise<{ folders: Set<string>; messages: string[] }> {
  const logs = captureLog();
  const queue = await createScanQueue({ file, clock: createManualClock(), log: logs.log, scanDelayMs: 60_000 });
  const folders = new Set<string>();
  for (let offset = 0; ; offset += 1000) {
    const page = await queue.listPending({ limit: 1000, offset });
    for (const item of page) folders.add(item.folder);
    if (page.length < 1000) break;
  }
  await queue.close();
  return { folders, messages: logs.messages() };
}

describe("SIGKILL at random points", () => {
  it("loses no acknowledged request and always reopens the file", async () => {
    const seed = Date.now();
    const next = random(seed);
    const temp = await makeTempDir("autoscan-kill-");
    const file = join(temp.dir, "queue.db");
    const acknowledged = new Set<number>();
    const began = Date.now();
    let start = 0;
    let kills = 0;
    try {
      for (let round = 0; round < 40 && start < TOTAL; round++) {
        // Most kills come after a random number of acks; some at a random time from spawn, which also lands in
        // the start-up (replay, migration, first checkpoint). No run gets past ~400 acks, so there are at least
        // four kills before the 2,000th. Past the time budget (and four kills) the last run goes to the end.
        const late = Date.now() - began > 35_000 && kills >= 4;
        const byTime = next() < 0.3;
        const result = late
          ? await runChild(file, start)
          : byTime
            ? await runChild(file, start, 400, 100 + Math.floor(next() * 900))
            : await runChild(file, start, 20 + Math.floor(next() * 250));
        if (!result.finished) kills++;
        for (const n of result.acked) acknowledged.add(n);
        const { folders, messages } = await pendingFolders(file);
        const lost = [...acknowledged].filter((n) => !folders.has(`/kill/item-${String(n)}`));
        expect(lost, `seed ${String(seed)}, round ${String(round)}`).toEqual([]);
        expect(messages.filter((m) => m.includes("damaged")), `seed ${String(seed)}`).toEqual([]);
        start = Math.max(start, ...result.acked.map((n) => n + 1));
      }
      expect(start).toBe(TOTAL);
      expect(kills).toBeGreaterThan(3);
      expect(acknowledged.size).toBeGreaterThan(TOTAL / 2);
    } finally {
      await temp.cleanup();
    }
  }, 60_000);
});
