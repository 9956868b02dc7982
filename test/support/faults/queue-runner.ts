import { spawn, spawnSync } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { createScanQueue } from "../../../src/queue/open-scan-queue.ts";
import { COMPILE_CACHE } from "./autoscan-server.ts";
import { captureLog, type LogRecord } from "../capture-log.ts";
import { createManualClock } from "../manual-clock.ts";

const CHILD = fileURLToPath(new URL("./queue-child.ts", import.meta.url));

export interface ChildRun {
  readonly acked: number[];
  readonly finished: boolean;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

export interface ChildOptions {
  readonly file: string;
  readonly start: number;
  readonly end: number;
  readonly checkpointBytes: number;
  readonly pauseMs?: number;
  readonly producers?: number;
  /** SIGKILL after this many acks. */
  readonly killAfterAcks?: number;
  /** SIGKILL after this long (default 30 s, a safety net). */
  readonly killAfterMs?: number;
  /**
   * Run under strace, which sends SIGKILL to the child itself at its `when`-th call of one of `syscalls` (counted per
   * thread; the child runs with one libuv thread, so the count is the process's): a kill at an exact step.
   */
  readonly killAtSyscall?: { readonly syscalls: readonly string[]; readonly when: number };
}

/** Whether strace can inject a signal here (it needs ptrace). */
export function probeStrace(): { ok: true } | { ok: false; reason: string } {
  const found = spawnSync("sh", ["-c", "command -v strace"], { stdio: "ignore" });
  if (found.status !== 0) return { ok: false, reason: "strace is not installed" };
  const tried = spawnSync("strace", ["-f", "-qq", "-o", "/dev/null", "-e", "trace=getpid", "-e", "inject=getpid:signal=SIGKILL:when=1", "sh", "-c", "kill -0 $$"], {
    stdio: "ignore",
    timeout: 10_000,
  });
  if (tried.signal === "SIGKILL" || tried.status === 137) return { ok: true };
  return { ok: false, reason: `strace could not inject a signal (exit ${String(tried.status)}, ${String(tried.signal)}): ptrace not allowed?` };
}

export function runQueueChild(options: ChildOptions): Promise<ChildRun> {
  const args = [
    CHILD,
    options.file,
    String(options.start),
    String(options.end),
    String(options.checkpointBytes),
    String(options.pauseMs ?? 0),
    String(options.producers ?? 4),
  ];
  const kill = options.killAtSyscall;
  const set = kill?.syscalls.join(",");
  const child = kill
    ? spawn("strace", ["-f", "-qq", "-o", "/dev/null", "-e", `trace=${set ?? ""}`, "-e", `inject=${set ?? ""}:signal=SIGKILL:when=${String(kill.when)}`, process.execPath, ...args], {
        stdio: ["ignore", "pipe", "pipe"],
        // No compile cache here: its own file writes would count among the calls the kill is timed by.
        env: { ...process.env, UV_THREADPOOL_SIZE: "1" },
      })
    : spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NODE_COMPILE_CACHE: COMPILE_CACHE } });
  return new Promise((resolve, reject) => {
    const acked: number[] = [];
    let finished = false;
    let stderr = "";
    const stop = (): void => void child.kill("SIGKILL");
    const timer = setTimeout(stop, options.killAfterMs ?? 30_000);
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (line === "done") finished = true;
      if (!line.startsWith("ack ")) return;
      acked.push(Number(line.slice(4)));
      if (acked.length >= (options.killAfterAcks ?? Infinity)) stop();
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      // Under strace the injected SIGKILL ends strace with the child's status (137) rather than a signal.
      const killed = signal === "SIGKILL" || code === 137;
      if (!killed && code !== 0) reject(new Error(`queue child exited with ${String(code)}: ${stderr}`));
      else resolve({ acked, finished, signal: killed ? "SIGKILL" : signal, stderr });
    });
  });
}

export const itemFolder = (n: number): string => `/fault/item-${String(n)}`;

export interface Reopened {
  readonly folders: Set<string>;
  readonly records: LogRecord[];
  messages(): string[];
}

/** Opens the queue file in this process (the real store), reads every pending folder, closes it. */
export async function reopenQueue(file: string): Promise<Reopened> {
  const logs = captureLog();
  const queue = await createScanQueue({ file, clock: createManualClock(), log: logs.log, scanDelayMs: 3_600_000 });
  const folders = new Set<string>();
  for (let offset = 0; ; offset += 1000) {
    const page = await queue.listPending({ limit: 1000, offset });
    for (const item of page) folders.add(item.folder);
    if (page.length < 1000) break;
  }
  await queue.close();
  return { folders, records: logs.records, messages: logs.messages };
}

/** One line of the log as written (`<crc32 hex> <json>\n`), read independently of the store's own decoder. */
export interface RawRecord {
  readonly seq: number;
  /** Byte offsets of the line in the file (end: after its newline). */
  readonly start: number;
  readonly end: number;
  /** Folders whose item rows this record writes. */
  readonly folders: string[];
}

export function parseLogLines(data: Buffer): RawRecord[] {
  const records: RawRecord[] = [];
  let start = 0;
  for (;;) {
    const newline = data.indexOf(0x0a, start);
    if (newline < 0) break;
    const line = data.subarray(start, newline).toString("utf8");
    try {
      const parsed = JSON.parse(line.slice(9)) as { s: number; c: { k: string; r?: { folder?: string } }[] };
      const folders = parsed.c.flatMap((change) => (change.k === "item" && change.r?.folder ? [change.r.folder] : []));
      records.push({ seq: parsed.s, start, end: newline + 1, folders });
    } catch {
      // not a whole record
    }
    start = newline + 1;
  }
  return records;
}
