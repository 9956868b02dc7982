import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { closeSync, mkdirSync, openSync, rmSync, statfsSync, writeFileSync, writeSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Real faults for the fault-injection suites: small tmpfs mounts that fill up, remounts read-only, a loop device
 * that answers EIO, a FUSE mount that never answers. Everything here needs root and the `mount` syscall; where the
 * machine cannot do it, `probeMounts()` says why and the suites skip loudly (see `describeFaults`).
 *
 * Every mount made here is recorded and removed by `cleanupMounts()` (lazy unmount, so a hung or busy mount goes
 * too): call it from `afterAll`, and it runs again on process exit as a last resort.
 */

const mounted: string[] = [];
const loops: string[] = [];
/** Processes that serve (or hang) a FUSE mount: killed at cleanup. */
const helpers = new Set<ChildProcess>();

function run(cmd: string, args: readonly string[]): string {
  return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 10_000 });
}

export type MountSupport = { readonly ok: true } | { readonly ok: false; readonly reason: string };

let support: MountSupport | undefined;

/** Whether this process may mount a tmpfs (root, and the syscall allowed): tried once for real. */
export function probeMounts(): MountSupport {
  if (support) return support;
  if (process.platform !== "linux") return (support = { ok: false, reason: `not Linux (${process.platform})` });
  if (process.getuid?.() !== 0) return (support = { ok: false, reason: "not root (mount needs root)" });
  const dir = join(tmpdir(), `autoscan-mount-probe-${String(process.pid)}`);
  mkdirSync(dir, { recursive: true });
  try {
    run("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir]);
    run("umount", [dir]);
    support = { ok: true };
  } catch (error) {
    support = { ok: false, reason: `mount -t tmpfs refused: ${firstLine(error)}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return support;
}

let unshareSupport: MountSupport | undefined;

/** Whether `unshare --pid --fork` can give a process a PID namespace of its own here (root, util-linux). */
export function probeUnshare(): MountSupport {
  if (unshareSupport) return unshareSupport;
  if (process.platform !== "linux") return (unshareSupport = { ok: false, reason: `not Linux (${process.platform})` });
  try {
    run("unshare", ["--pid", "--fork", "true"]);
    unshareSupport = { ok: true };
  } catch (error) {
    unshareSupport = { ok: false, reason: `unshare --pid refused: ${firstLine(error)}` };
  }
  return unshareSupport;
}

function firstLine(error: unknown): string {
  const e = error as { stderr?: string; message?: string };
  return (e.stderr?.trim() || e.message || String(error)).split("\n")[0] ?? "";
}

/** A fresh empty folder under the OS temp dir. */
export async function freshDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** Mounts a tmpfs of `sizeBytes` on `dir` (created if missing). */
export function mountTmpfs(dir: string, sizeBytes: number): void {
  mkdirSync(dir, { recursive: true });
  run("mount", ["-t", "tmpfs", "-o", `size=${String(sizeBytes)},mode=0755`, "tmpfs", dir]);
  mounted.push(dir);
}

/** `mount -o remount,ro|rw` of a mount made here. */
export function remount(dir: string, mode: "ro" | "rw"): void {
  run("mount", ["-o", `remount,${mode}`, dir]);
}

/** Lazy unmount: works on a busy or hung mount too. Never throws. */
export function umountLazy(dir: string): void {
  spawnSync("umount", ["-l", dir], { stdio: "ignore", timeout: 10_000 });
  const at = mounted.indexOf(dir);
  if (at >= 0) mounted.splice(at, 1);
}

/** Bytes a new file may still take on the filesystem of `dir`. */
export function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return Number(s.bavail) * Number(s.bsize);
}

/**
 * Fills the filesystem of `dir` with a filler file until at most `leaveBytes` are free (exactly, in whole pages, on
 * a tmpfs). Returns the filler's path; `unlinkSync` it (or `freeSpace`) to give the space back.
 */
export function fillDisk(dir: string, leaveBytes: number, name = "filler.bin"): string {
  const path = join(dir, name);
  const fd = openSync(path, "a");
  const chunk = Buffer.alloc(64 * 1024, 0x46);
  try {
    for (let i = 0; i < 100_000; i++) {
      const free = freeBytes(dir);
      if (free <= leaveBytes) break;
      const want = Math.min(chunk.length, free - leaveBytes);
      try {
        writeSync(fd, chunk, 0, want);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOSPC") break;
        throw error;
      }
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

/** Removes the filler file(s) written by `fillDisk`. */
export function freeSpace(path: string): void {
  rmSync(path, { force: true });
}

/**
 * A real block device on a loop device: an ext4 filesystem (no journal) whose backing file sits on its own tmpfs.
 *
 * - `breakDisk()` cuts the backing file short and tells the loop device, so every write past the cut fails in the
 *   block layer ("attempt to access beyond end of device") and `fsync`/`fdatasync` report EIO, as a failing disk
 *   does; the bytes cut off are kept aside. `healDisk()` puts them back and restores the size: the disk answers
 *   again, holding what it held before, plus what it took below the cut meanwhile.
 * - `failFilesystem()` makes ext4 report an error (`/sys/fs/ext4/<dev>/trigger_fs_error`): mounted with
 *   `errors=remount-ro`, the kernel turns the filesystem read-only at once, open files and all, as it does after a
 *   real metadata error. `remountFresh()` is the admin's repair: unmount (the kernel will not make it read-write
 *   again) and mount it again.
 */
export interface LoopDisk {
  readonly dir: string;
  readonly device: string;
  breakDisk(): void;
  healDisk(): void;
  failFilesystem(): void;
  /** Unmounts (retrying while busy, up to `timeoutMs`) and mounts again; throws with the holders when it stays busy. */
  remountFresh(timeoutMs?: number): Promise<void>;
}

export type LoopSupport = { readonly ok: true } | { readonly ok: false; readonly reason: string };

export function probeLoopDevices(): LoopSupport {
  const mounts = probeMounts();
  if (!mounts.ok) return mounts;
  for (const tool of ["losetup", "mkfs.ext4", "truncate", "dd"]) {
    if (spawnSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" }).status !== 0) {
      return { ok: false, reason: `${tool} is not installed` };
    }
  }
  try {
    const free = run("losetup", ["-f"]).trim();
    if (!free) return { ok: false, reason: "no free loop device" };
  } catch (error) {
    return { ok: false, reason: `losetup -f failed: ${firstLine(error)}` };
  }
  return { ok: true };
}

const LOOP_DISK_BYTES = 16 * 1024 * 1024;
/** Below this the disk keeps answering: the superblock, the group descriptors, the first bitmaps. */
const EIO_CUT_BYTES = 64 * 1024;

export function makeLoopDisk(root: string, errors: "continue" | "remount-ro" = "continue"): LoopDisk {
  const back = join(root, "backing");
  const dir = join(root, "disk");
  mountTmpfs(back, 2 * LOOP_DISK_BYTES + 1024 * 1024);
  const image = join(back, "disk.img");
  const tail = join(back, "tail.img");
  run("truncate", ["-s", String(LOOP_DISK_BYTES), image]);
  const device = run("losetup", ["-f", "--show", image]).trim();
  loops.push(device);
  run("mkfs.ext4", ["-q", "-F", "-O", "^has_journal", "-b", "1024", "-E", "nodiscard", device]);
  mkdirSync(dir, { recursive: true });
  const mountIt = (): void => {
    run("mount", ["-o", `errors=${errors}`, device, dir]);
    mounted.push(dir);
  };
  mountIt();
  let broken = false;
  return {
    dir,
    device,
    breakDisk() {
      if (broken) return;
      broken = true;
      spawnSync("sync", [dir], { stdio: "ignore", timeout: 10_000 });
      // Keep what lies past the cut, then cut it off the device.
      run("dd", [`if=${image}`, `of=${tail}`, "bs=64k", `skip=${String(EIO_CUT_BYTES / 65536)}`, "status=none", "conv=sparse"]);
      run("truncate", ["-s", String(EIO_CUT_BYTES), image]);
      run("losetup", ["-c", device]);
    },
    healDisk() {
      if (!broken) return;
      broken = false;
      run("dd", [`if=${tail}`, `of=${image}`, "bs=64k", `seek=${String(EIO_CUT_BYTES / 65536)}`, "status=none", "conv=notrunc,sparse"]);
      run("truncate", ["-s", String(LOOP_DISK_BYTES), image]);
      run("losetup", ["-c", device]);
      rmSync(tail, { force: true });
    },
    failFilesystem() {
      writeFileSync(`/sys/fs/ext4/${basename(device)}/trigger_fs_error`, "autoscan fault test\n");
    },
    async remountFresh(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const result = spawnSync("umount", [dir], { encoding: "utf8", timeout: 10_000 });
        if (result.status === 0) break;
        if (Date.now() > deadline) {
          const holders = spawnSync("sh", ["-c", `find /proc/[0-9]*/fd -lname "$1/*" -printf '%p -> %l\\n' 2>/dev/null | head -20`, "holders", dir], {
            encoding: "utf8",
          }).stdout;
          throw new Error(`umount ${dir} stayed busy for ${String(timeoutMs)} ms: ${result.stderr.trim()}\nopen files there:\n${holders}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const at = mounted.indexOf(dir);
      if (at >= 0) mounted.splice(at, 1);
      mountIt();
    },
  };
}

/**
 * A FUSE mount nobody serves: `/dev/fuse` is opened and mounted by a shell that then only sleeps, so every lookup
 * under `dir` blocks (a hung network share, an rclone mount whose remote stopped answering) until `release()` kills
 * the shell; then they fail with ENOTCONN.
 */
export interface HungMount {
  readonly dir: string;
  release(): void;
}

// Every FUSE mount in the tests is made with `mount -i`: where Debian's fuse3 is installed, plain `mount -t fuse` hands
// the call to its `mount.fuse` helper, which takes the source ("fuse", "autoscan-faults") for a program to run.
export async function mountHungFuse(dir: string): Promise<HungMount> {
  mkdirSync(dir, { recursive: true });
  const shell = spawn(
    "bash",
    [
      "-c",
      `exec 3<>/dev/fuse && mount -i -t fuse -o fd=3,rootmode=40000,user_id=0,group_id=0 fuse "$1" && echo mounted && exec sleep 600`,
      "hung-fuse",
      dir,
    ],
    { stdio: ["ignore", "pipe", "pipe"], detached: false },
  );
  helpers.add(shell);
  mounted.push(dir);
  let err = "";
  shell.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const ok = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 10_000);
    shell.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      if (chunk.includes("mounted")) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    shell.once("exit", () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
  if (!ok) {
    shell.kill("SIGKILL");
    helpers.delete(shell);
    umountLazy(dir);
    throw new Error(`could not mount a FUSE file system on ${dir}: ${err.trim() || "no answer"}`);
  }
  return {
    dir,
    release() {
      shell.kill("SIGKILL");
      helpers.delete(shell);
    },
  };
}

/**
 * The FUSE file system of `fuse-passthrough.ts` on `dir`, mirroring `backing`, served by a child process: `set()`
 * switches its faults (`fsyncdir EPERM`, `fsync EIO`, `readonly on`, … see there), for real, through the kernel.
 */
export interface FaultyFuse {
  readonly dir: string;
  set(command: string): Promise<void>;
  stop(): void;
}

export function probeFuse(): MountSupport {
  const mounts = probeMounts();
  if (!mounts.ok) return mounts;
  try {
    closeSync(openSync("/dev/fuse", "r+"));
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: `/dev/fuse cannot be opened: ${firstLine(error)}` };
  }
}

const FUSE_SERVER = fileURLToPath(new URL("./fuse-passthrough.ts", import.meta.url));

export async function mountFaultyFuse(backing: string, dir: string): Promise<FaultyFuse> {
  mkdirSync(backing, { recursive: true });
  mkdirSync(dir, { recursive: true });
  const server = spawn(process.execPath, [FUSE_SERVER, backing, dir], { stdio: ["pipe", "pipe", "pipe"] });
  helpers.add(server);
  mounted.push(dir);
  let out = "";
  const waiters: { text: string; from: number; resolve(): void }[] = [];
  server.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
    for (const waiter of [...waiters]) {
      if (!out.includes(waiter.text, waiter.from)) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  });
  let err = "";
  server.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const waitFor = (text: string, what: string, from = 0): Promise<void> =>
    new Promise((resolve, reject) => {
      if (out.includes(text, from)) return resolve();
      const timer = setTimeout(() => reject(new Error(`FUSE server: no '${text}' after 10 s (${what}): ${err.trim()}`)), 10_000);
      waiters.push({ text, from, resolve: () => (clearTimeout(timer), resolve()) });
    });
  try {
    await waitFor("mounted\n", "mount");
  } catch (error) {
    server.kill("SIGKILL");
    umountLazy(dir);
    throw error;
  }
  return {
    dir,
    async set(command) {
      const from = out.length;
      server.stdin.write(`${command}\n`);
      await waitFor(`ok ${command}\n`, command, from);
    },
    stop() {
      umountLazy(dir);
      server.kill("SIGKILL");
      helpers.delete(server);
    },
  };
}

/** Removes every mount and loop device made here (lazy unmount), kills hung FUSE shells. Never throws. */
export function cleanupMounts(): void {
  for (const helper of helpers) helper.kill("SIGKILL");
  helpers.clear();
  for (const dir of [...mounted].reverse()) umountLazy(dir);
  for (const device of loops.splice(0)) spawnSync("losetup", ["-d", device], { stdio: "ignore", timeout: 10_000 });
}

process.once("exit", cleanupMounts);
