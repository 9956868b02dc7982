import { spawn, type ChildProcess } from "node:child_process";

/**
 * Where the looks at a media disk run: in a small helper process per mount being looked at, never on libuv's thread
 * pool. A stat on a mount that stopped answering blocks its thread in the kernel until the mount answers; on the pool
 * that thread is one of the four the queue's journal writes need, and Node joins every thread of the process before
 * it exits, so a single stuck stat also stops the process from exiting. A helper process holds the stuck stat
 * instead: the pool stays free whatever the mounts do, and a helper stuck on a hung mount is killed and left behind at
 * exit. N hung mounts cost N helpers (one thread each), never a thread of autoscan's own.
 *
 * A helper answers one look at a time (the probe sends it one at a time), exits when it loses its parent, and is
 * closed after `idleMs` without a look.
 */
/** `list` follows the listed path if it is a symbolic link; `list-here` answers `link` for one. */
export type LookOp = "stat" | "list" | "list-here";

/** What the helper found: a `DiskEntry`-like value (or a listing), with the error code when the call failed. */
export interface LookAnswer {
  readonly value: unknown;
  readonly code?: string;
}

export interface MountLookers {
  /** Runs one look in `mount`'s helper (started on first use); never rejects (a helper that died: `HELPER_GONE`). */
  look(mount: string, op: LookOp, path: string): Promise<LookAnswer>;
  /**
   * The look in flight in `from`'s helper turned out to be under `to` (a mount that appeared after the mount table was
   * read): the helper becomes `to`'s, and `from` gets a new one at its next look.
   */
  move(from: string, to: string): void;
  /** Kills every helper (a look still in flight answers with `HELPER_GONE`). */
  close(): void;
}

const IDLE_MS = 30_000;
/** The code of a look whose helper died before it answered. */
export const HELPER_GONE = "ECHILD";

/** Files per message of a long listing. */
const PART = 1_000;

/**
 * The helper: synchronous calls on its own main thread, one message in, one message out (a long listing's files go
 * ahead of it in parts of `PART`). A listing answers a `ListAnswer` (`dir-listing.ts`): what the folder is (lstat, then
 * stat through a link when it follows one), then its entries, a link's target looked at only to tell a link to a
 * folder from a link to a file.
 */
const HELPER_SOURCE = `
const fs = require("node:fs");
const answer = (id, value, code) => process.send(code === undefined ? { id, value } : { id, value, code });
const gone = (code) => code === "ENOENT" || code === "ENOTDIR";
function list(path, follow) {
  let info = fs.lstatSync(path, { bigint: true });
  if (info.isSymbolicLink()) {
    if (!follow) return "link";
    info = fs.statSync(path, { bigint: true });
  }
  if (!info.isDirectory()) return "missing";
  const id = info.dev + ":" + info.ino + ":" + info.birthtimeNs;
  const folders = [];
  const links = [];
  const files = [];
  for (const entry of fs.readdirSync(path, { withFileTypes: true })) {
    const link = entry.isSymbolicLink();
    if (entry.isDirectory()) folders.push(entry.name);
    else if (entry.isFile() || link) {
      let target;
      try { target = fs.statSync(path + "/" + entry.name); } catch { continue; }
      if (target.isDirectory()) (link ? links : folders).push(entry.name);
      else files.push({ name: entry.name, size: target.size, mtimeMs: Math.trunc(target.mtimeMs) });
    }
  }
  return { id, folders, links, files };
}
// A long listing goes in parts of files, then the rest with the answer: one message of 50,000 files would be parsed by
// autoscan in one stretch (~30 ms) while webhooks and /health wait.
function answerInParts(id, listing) {
  const files = listing && Array.isArray(listing.files) ? listing.files : [];
  let at = 0;
  for (; files.length - at > ${String(PART)}; at += ${String(PART)}) process.send({ id, part: files.slice(at, at + ${String(PART)}) });
  answer(id, at === 0 ? listing : { ...listing, files: files.slice(at) });
}
process.on("message", ({ id, op, path }) => {
  try {
    if (op === "stat") answer(id, fs.statSync(path).isDirectory() ? "directory" : "file");
    else answerInParts(id, list(path, op === "list"));
  } catch (error) {
    const code = (error && error.code) || "EIO";
    if (op === "stat" || gone(code)) answer(id, "missing", code);
    else answer(id, { unreadable: code }, code);
  }
});
process.on("disconnect", () => process.exit(0));
`;

/** Every helper of the process, killed when it exits (a helper stuck on a hung mount would not notice by itself). */
const live = new Set<ChildProcess>();
let exitHook = false;

export function createMountLookers(): MountLookers {
  interface Helper {
    mount: string;
    readonly child: ChildProcess;
    readonly pending: Map<number, (answer: LookAnswer) => void>;
    /** A long listing's files received so far, by look. */
    readonly parts: Map<number, unknown[][]>;
    idle?: NodeJS.Timeout;
  }
  const helpers = new Map<string, Helper>();
  let nextId = 0;

  function stop(helper: Helper): void {
    if (helpers.get(helper.mount) === helper) helpers.delete(helper.mount);
    clearTimeout(helper.idle);
    live.delete(helper.child);
    helper.child.kill("SIGKILL");
    for (const resolve of helper.pending.values()) resolve({ value: "missing", code: HELPER_GONE });
    helper.pending.clear();
    helper.parts.clear();
  }

  function helperOf(mount: string): Helper {
    const existing = helpers.get(mount);
    if (existing) return existing;
    const child = spawn(process.execPath, ["-e", HELPER_SOURCE], { stdio: ["ignore", "ignore", "ignore", "ipc"] });
    const helper: Helper = { mount, child, pending: new Map(), parts: new Map() };
    helpers.set(mount, helper);
    live.add(child);
    if (!exitHook) {
      exitHook = true;
      process.once("exit", () => {
        for (const each of live) each.kill("SIGKILL");
      });
    }
    // Neither the helper nor its channel keeps the process alive: a look in flight has its own timer.
    child.unref();
    child.channel?.unref();
    child.on("message", (message: { id: number; value?: unknown; code?: string; part?: unknown[] }) => {
      if (message.part !== undefined) {
        const parts = helper.parts.get(message.id);
        if (parts) parts.push(message.part);
        else helper.parts.set(message.id, [message.part]);
        return;
      }
      const parts = helper.parts.get(message.id);
      helper.parts.delete(message.id);
      const value = parts ? withParts(message.value as { files: unknown[] }, parts) : message.value;
      const resolve = helper.pending.get(message.id);
      helper.pending.delete(message.id);
      resolve?.(message.code === undefined ? { value } : { value, code: message.code });
      if (helper.pending.size === 0) {
        helper.idle = setTimeout(() => stop(helper), IDLE_MS);
        helper.idle.unref();
      }
    });
    child.once("exit", () => stop(helper));
    child.once("error", () => stop(helper));
    return helper;
  }

  return {
    look(mount, op, path) {
      const helper = helperOf(mount);
      clearTimeout(helper.idle);
      const id = nextId++;
      return new Promise<LookAnswer>((resolve) => {
        helper.pending.set(id, resolve);
        helper.child.send({ id, op, path }, (error) => {
          if (error) stop(helper);
        });
      });
    },
    move(from, to) {
      const helper = helpers.get(from);
      if (!helper || helpers.has(to)) return;
      helpers.delete(from);
      helper.mount = to;
      helpers.set(to, helper);
    },
    close() {
      for (const helper of [...helpers.values()]) stop(helper);
    },
  };
}

/** A listing whose files came in parts ahead of it: all its files, in the helper's order. */
function withParts(listing: { files: unknown[] }, parts: unknown[][]): unknown {
  return { ...listing, files: parts.flat().concat(listing.files) };
}
