import { appendFileSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeTempDir } from "./support/capture-log.ts";
import { describeFaults } from "./support/faults/describe-faults.ts";
import { itemFolder, parseLogLines, probeStrace, reopenQueue, runQueueChild, type RawRecord } from "./support/faults/queue-runner.ts";

/**
 * The queue store's files under crashes and damage, with real processes and real files: a child process runs the
 * real queue and prints `ack <n>` after each durable enqueue; it is SIGKILLed at random points or at an exact system
 * call of a checkpoint (strace), or its files are damaged afterwards as a disk or a careless hand would. Then the
 * queue is opened again for real: every acknowledged request must be there, and every loss must be logged, counted.
 */
const temps: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(temps.map((cleanup) => cleanup()));
});

async function tempQueue(name: string): Promise<{ dir: string; file: string }> {
  const temp = await makeTempDir(`autoscan-faults-${name}-`);
  temps.push(temp.cleanup);
  return { dir: temp.dir, file: join(temp.dir, "queue.db") };
}

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

function missingOf(acked: Iterable<number>, folders: Set<string>): number[] {
  return [...acked].filter((n) => !folders.has(itemFolder(n)));
}

const damageWords = (messages: string[]): string[] => messages.filter((m) => /damaged|are missing|Skipped queue log record/.test(m));

describe("faults: SIGKILL inside checkpoints (a checkpoint after every write)", () => {
  it("random kills: every acknowledged request survives, the file always reopens, nothing is reported damaged", async () => {
    const seed = Date.now();
    const next = random(seed);
    const { file } = await tempQueue("kill-checkpoint");
    const acked = new Set<number>();
    let start = 0;
    let kills = 0;
    const began = Date.now();
    for (let round = 0; round < 10 && (round < 6 || Date.now() - began < 6_000); round++) {
      const byTime = next() < 0.4;
      const run = await runQueueChild({
        file,
        start,
        end: start + 400,
        checkpointBytes: 1,
        producers: 3,
        ...(byTime ? { killAfterMs: 150 + Math.floor(next() * 600) } : { killAfterAcks: 1 + Math.floor(next() * 40) }),
      });
      if (run.signal === "SIGKILL") kills++;
      for (const n of run.acked) acked.add(n);
      const reopened = await reopenQueue(file);
      expect(missingOf(acked, reopened.folders), `seed ${String(seed)}, round ${String(round)}`).toEqual([]);
      expect(damageWords(reopened.messages()), `seed ${String(seed)}, round ${String(round)}`).toEqual([]);
      start = Math.max(start, ...run.acked.map((n) => n + 1)) + 1;
    }
    expect(kills).toBeGreaterThanOrEqual(3);
    expect(acked.size).toBeGreaterThan(10);
  }, 40_000);
});

const strace = probeStrace();
describeFaults("faults: SIGKILL at each step of a checkpoint (strace kills at the n-th call)", strace, { concurrent: true }, () => {
  // copy: keeping the previous snapshot (a copy of queue.db); rename: .prev and the new snapshot; fsync: the temp
  // files and the folder;
  // fdatasync: a log record; unlink: dropping old log generations.
  const steps: readonly { name: string; syscalls: string[]; whens: number[] }[] = [
    { name: "copy", syscalls: ["copy_file_range", "sendfile", "sendfile64"], whens: [2] },
    { name: "rename", syscalls: ["rename", "renameat", "renameat2"], whens: [1, 2, 3] },
    { name: "fsync", syscalls: ["fsync"], whens: [1, 3, 5] },
    { name: "fdatasync", syscalls: ["fdatasync"], whens: [2] },
    { name: "unlink", syscalls: ["unlink", "unlinkat"], whens: [1] },
  ];
  it.each(steps)("kill before the n-th $name: nothing acknowledged is lost, nothing damaged", async (step) => {
    const { file } = await tempQueue(`step-${step.name}`);
    const acked = new Set<number>();
    let start = 0;
    const kills: number[] = [];
    for (const when of step.whens) {
      const run = await runQueueChild({ file, start, end: start + 12, checkpointBytes: 1, producers: 2, killAtSyscall: { syscalls: step.syscalls, when } });
      if (run.signal === "SIGKILL") kills.push(when);
      for (const n of run.acked) acked.add(n);
      const reopened = await reopenQueue(file);
      expect(missingOf(acked, reopened.folders), `killed before ${step.name} #${String(when)}`).toEqual([]);
      expect(damageWords(reopened.messages()), `killed before ${step.name} #${String(when)}`).toEqual([]);
      start += 13;
    }
    // Each kill really happened (the child did reach that many calls).
    expect(kills.length, `kills at ${step.name} #${kills.join(", #")}`).toBe(step.whens.length);
  }, 60_000);

  it("a crash inside a checkpoint, after queue.db.prev is written and before the new snapshot replaces queue.db, then queue.db damaged in place: nothing lost", async () => {
    // Renames of a fresh queue: #1 the first snapshot; then per checkpoint the copy of queue.db onto .prev and the
    // new snapshot over queue.db: #2 and #3, #4 and #5 … Killed before #9 (the fifth checkpoint, so older log
    // generations are gone already). .prev was once a hard link to queue.db here (one inode: damage to one was
    // damage to both); it is a copy now.
    const { dir, file } = await tempQueue("crash-window");
    const run = await runQueueChild({ file, start: 0, end: 40, checkpointBytes: 1, producers: 1, killAtSyscall: { syscalls: ["rename", "renameat", "renameat2"], when: 9 } });
    expect(run.signal).toBe("SIGKILL");
    const sameFile = statSync(join(dir, "queue.db.prev")).ino === statSync(file).ino;
    expect(run.acked.length).toBeGreaterThan(2);
    writeFileSync(file, Buffer.alloc(readFileSync(file).length, 0x5a));
    const reopened = await reopenQueue(file);
    expect(
      missingOf(run.acked, reopened.folders),
      `queue.db.prev ${sameFile ? "is a hard link to queue.db (one inode)" : "is its own file"}; the log said:\n${reopened.messages().join("\n")}`,
    ).toEqual([]);
  }, 30_000);
});

/** Runs the child until `acks` acknowledgements, then SIGKILL: the files are left as a crash leaves them. */
async function crashedQueue(name: string, acks: number, checkpointBytes: number) {
  const paths = await tempQueue(name);
  const run = await runQueueChild({ file: paths.file, start: 0, end: acks * 4, checkpointBytes, producers: 2, pauseMs: 1, killAfterAcks: acks });
  expect(run.signal).toBe("SIGKILL");
  return { ...paths, acked: new Set(run.acked) };
}

function logFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => /^queue\.db\.journal\.\d+$/.test(name))
    .sort((a, b) => Number(a.split(".").pop()) - Number(b.split(".").pop()))
    .map((name) => join(dir, name));
}

/** The newest log generation that holds records. */
function newestLog(dir: string): { path: string; records: RawRecord[] } {
  for (const path of logFiles(dir).reverse()) {
    const records = parseLogLines(readFileSync(path));
    if (records.length > 0) return { path, records };
  }
  throw new Error(`no log generation with records in ${dir}: ${readdirSync(dir).join(", ")}`);
}

describe.concurrent("faults: damaged queue files", () => {
  it("a torn log tail (half a record after the last one): every intact record replayed, the torn bytes reported", async () => {
    // No checkpoint during the run: every acknowledged request is in the log only.
    const { dir, file, acked } = await crashedQueue("torn-tail", 30, 64 * 1024 * 1024);
    const log = newestLog(dir);
    const line = readFileSync(log.path).subarray(log.records[0]?.start ?? 0, log.records[0]?.end ?? 0);
    appendFileSync(log.path, line.subarray(0, Math.floor(line.length / 2)));
    const reopened = await reopenQueue(file);
    expect(missingOf(acked, reopened.folders)).toEqual([]);
    const torn = reopened.records.find((r) => r.msg.includes("incomplete record"));
    expect(torn?.msg).toContain(`${String(Math.floor(line.length / 2))} bytes`);
    expect(damageWords(reopened.messages())).toEqual([]);
  });

  const damages = [
    ["garbage", (path: string) => writeFileSync(path, Buffer.alloc(readFileSync(path).length, 0x5a))],
    ["truncated to half", (path: string) => truncateSync(path, Math.floor(readFileSync(path).length / 2))],
    ["empty", (path: string) => truncateSync(path, 0)],
  ] as const;

  it.each(damages)("a corrupt snapshot (queue.db %s, damaged in place) with queue.db.prev present: rebuilt from .prev and the log, nothing lost", async (name, damage) => {
    // Small checkpoints, and a clean stop after the last one: queue.db.prev is the snapshot before, the log since it
    // is kept, and the two snapshots are two files.
    const { dir, file } = await tempQueue("bad-snapshot");
    const run = await runQueueChild({ file, start: 0, end: 40, checkpointBytes: 2 * 1024, producers: 2 });
    expect(run.finished).toBe(true);
    expect(statSync(join(dir, "queue.db.prev")).ino).not.toBe(statSync(file).ino);
    damage(file);
    const reopened = await reopenQueue(file);
    expect(missingOf(run.acked, reopened.folders)).toEqual([]);
    if (name !== "empty") {
      expect(reopened.messages().some((m) => m.includes("is damaged") && m.includes("previous snapshot"))).toBe(true);
    }
    expect(reopened.messages().filter((m) => /are missing|Skipped queue log record/.test(m))).toEqual([]);
  });

  it("a log with a hole in the middle (zeroed pages): every intact record replayed, the lost ones counted", async () => {
    const { dir, file, acked } = await crashedQueue("log-hole", 60, 64 * 1024 * 1024);
    const log = newestLog(dir);
    const data = readFileSync(log.path);
    // Zero the middle third: the records wholly or partly inside it are lost; those before and after are intact.
    const from = Math.floor(data.length / 3);
    const to = Math.floor((2 * data.length) / 3);
    data.fill(0, from, to);
    writeFileSync(log.path, data);
    const lost = log.records.filter((r) => r.end > from && r.start < to);
    const intact = log.records.filter((r) => !(r.end > from && r.start < to));
    const lostFolders = new Set(lost.flatMap((r) => r.folders));
    const reopened = await reopenQueue(file);
    const expected = intact.flatMap((r) => r.folders).filter((f) => !lostFolders.has(f));
    expect(expected.filter((f) => !reopened.folders.has(f))).toEqual([]);
    // Acknowledged requests outside the damaged records are all there.
    expect(missingOf([...acked].filter((n) => !lostFolders.has(itemFolder(n))), reopened.folders)).toEqual([]);
    // The loss is logged with its count: the seqs missing between the intact records.
    const missing = reopened.records.find((r) => r.msg.includes("are missing"));
    expect(missing, reopened.messages().join("\n")).toBeDefined();
    expect(missing?.missing).toBe(lost.length);
    expect(lost.length).toBeGreaterThan(0);
  });

  it("a log cut in half (the file truncated): every record before the cut replayed, the loss logged", async () => {
    const { dir, file, acked } = await crashedQueue("log-cut", 60, 64 * 1024 * 1024);
    const log = newestLog(dir);
    const data = readFileSync(log.path);
    const cut = Math.floor(data.length / 2);
    truncateSync(log.path, cut);
    const before = log.records.filter((r) => r.end <= cut);
    const after = log.records.filter((r) => r.end > cut);
    const reopened = await reopenQueue(file);
    const expected = before.flatMap((r) => r.folders);
    expect(expected.filter((f) => !reopened.folders.has(f))).toEqual([]);
    const lostAcked = [...acked].filter((n) => after.some((r) => r.folders.includes(itemFolder(n))) && !reopened.folders.has(itemFolder(n)));
    expect(lostAcked.length).toBeGreaterThan(0);
    // The loss is logged, naming the file. (How many records the cut took cannot be known from what is left: no
    // later record carries a higher seq. The report notes the wording.)
    const words = reopened.records.filter((r) => r.level >= 40).map((r) => r.msg);
    expect(words.some((m) => m.includes(log.path)), words.join("\n")).toBe(true);
    console.info(
      `[faults] log cut in half: ${String(after.length)} acknowledged record(s) (${String(lostAcked.length)} request(s)) were cut off; logged:\n  ${words.join("\n  ")}`,
    );
  });
});
