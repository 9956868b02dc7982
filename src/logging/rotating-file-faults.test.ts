// @module-tag process
import { execFileSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmdirSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openRotatingFile, type RotatingFile, type RotatingFileEvent } from "./rotating-file.ts";

/**
 * The rotating file under real faults: a small tmpfs filled up (ENOSPC), a read-only mount (EROFS), an immutable file
 * (`chattr +i`: root ignores file modes, not this), a file and a folder removed under it. Mounting needs root (or
 * CAP_SYS_ADMIN); where it is refused these tests are skipped, and the reason is printed.
 */
const mountRefusal = probeMount();
if (mountRefusal) console.warn(`rotating-file-faults: skipped, cannot mount a tmpfs here: ${mountRefusal}`);

let dir: string;
beforeEach(() => {
  if (mountRefusal) return;
  dir = mkdtempSync(join(tmpdir(), "autoscan-logfault-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir], { stdio: "pipe" });
});
afterEach(() => {
  if (mountRefusal) return;
  tryRun("chattr", ["-R", "-i", dir]);
  // Lazily: a failed test may leave the file open.
  execFileSync("umount", ["-l", dir], { stdio: "pipe" });
  rmdirSync(dir);
});

/**
 * A 100-byte numbered line: whole lines are easy to recognise in the file afterwards, and 100 does not divide the
 * page size, so on a full tmpfs one line is cut part-way (the write stops at the end of the file's last page).
 */
const line = (n: number): string => `${`line ${n} `.padEnd(99, ".")}\n`;
const WHOLE_LINES = /^(line \d+ \.+\n)*$/;

/** Writes a filler file until the tmpfs has no page left. */
function fillDisk(): string {
  const path = join(dir, "filler");
  const fd = openSync(path, "w");
  const chunk = Buffer.alloc(4096, "x");
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  } finally {
    closeSync(fd);
  }
  return path;
}

/** Queues one line and waits for the disk's answer: true when it was written, false when it was dropped. */
async function writeOne(file: RotatingFile, text: string): Promise<boolean> {
  const before = file.dropped;
  file.write(text);
  await file.flushed();
  return file.dropped === before;
}

function open(path: string, maxBytes = 1_000_000, maxFiles = 2) {
  const events: RotatingFileEvent[] = [];
  const file = openRotatingFile({ path, maxBytes, maxFiles }, (event) => events.push(event));
  return { file, events };
}

describe.skipIf(mountRefusal !== undefined)("openRotatingFile under real faults (never throws, drops and counts)", () => {
  it("on a full disk: drops whole lines, reports once, leaves no torn line, and recovers when there is room", async () => {
    const path = join(dir, "autoscan.log");
    const { file, events } = open(path);
    for (let n = 1; n <= 10; n++) expect(await writeOne(file, line(n))).toBe(true);
    const filler = fillDisk();
    // The file's last page still has room for a few lines; the line that crosses into a new page fails part-way.
    const results: boolean[] = [];
    for (let n = 11; n <= 200; n++) results.push(await writeOne(file, line(n)));
    const firstDropped = results.indexOf(false);
    expect(firstDropped).toBeGreaterThanOrEqual(0);
    expect(results.slice(firstDropped).every((ok) => !ok)).toBe(true);
    const dropped = results.length - firstDropped;
    expect(file.dropped).toBe(dropped);
    expect(events).toEqual([{ kind: "failing", path, action: "written", reason: "disk full (ENOSPC)" }]);
    const whileFull = readFileSync(path, "utf8");
    expect(whileFull).toMatch(WHOLE_LINES);
    expect(whileFull.endsWith(line(10 + firstDropped))).toBe(true);

    rmSync(filler);
    expect(await writeOne(file, line(201))).toBe(true);
    expect(events.slice(1)).toEqual([{ kind: "recovered", path, dropped }]);
    expect(await writeOne(file, line(202))).toBe(true);
    expect(events).toHaveLength(2);
    file.close();
    expect(readFileSync(path, "utf8")).toBe(whileFull + line(201) + line(202));
  });

  it("a second episode is reported again, with its own count", async () => {
    const path = join(dir, "autoscan.log");
    const { file, events } = open(path);
    await writeOne(file, line(1));
    for (let episode = 1; episode <= 2; episode++) {
      const filler = fillDisk();
      let n = 0;
      while ((await writeOne(file, line(1000 * episode + n))) && n < 200) n++;
      await writeOne(file, line(1));
      await writeOne(file, line(2));
      rmSync(filler);
      expect(await writeOne(file, line(3))).toBe(true);
    }
    file.close();
    expect(events.map((event) => event.kind)).toEqual(["failing", "recovered", "failing", "recovered"]);
    expect(events.filter((event) => event.kind === "recovered").map((event) => event.dropped)).toEqual([3, 3]);
  });

  it("a rotation that fails (the file cannot be renamed) drops lines instead of passing maxBytes, and rotation resumes later", async () => {
    const path = join(dir, "autoscan.log");
    const { file, events } = open(path, 350, 2);
    for (let n = 1; n <= 3; n++) expect(await writeOne(file, line(n))).toBe(true);
    execFileSync("chattr", ["+i", path]);
    expect(await writeOne(file, line(4))).toBe(false);
    expect(await writeOne(file, line(5))).toBe(false);
    expect(events).toEqual([{ kind: "failing", path, action: "rotated", reason: "not permitted (EPERM)" }]);
    expect(readFileSync(path, "utf8")).toBe(line(1) + line(2) + line(3));
    execFileSync("chattr", ["-i", path]);
    expect(await writeOne(file, line(6))).toBe(true);
    file.close();
    expect(events.slice(1)).toEqual([{ kind: "recovered", path, dropped: 2 }]);
    expect(readFileSync(`${path}.1`, "utf8")).toBe(line(1) + line(2) + line(3));
    expect(readFileSync(path, "utf8")).toBe(line(6));
  });

  it("a file on a read-only mount: every line dropped and counted, one report; lines go in once it is writable", async () => {
    const path = join(dir, "logs", "autoscan.log");
    mkdirSync(join(dir, "logs"));
    execFileSync("mount", ["-o", "remount,ro", dir]);
    const { file, events } = open(path);
    for (let n = 1; n <= 5; n++) expect(await writeOne(file, line(n))).toBe(false);
    expect(file.dropped).toBe(5);
    expect(events).toEqual([{ kind: "failing", path, action: "written", reason: "read-only file system (EROFS)" }]);
    execFileSync("mount", ["-o", "remount,rw", dir]);
    expect(await writeOne(file, line(6))).toBe(true);
    file.close();
    expect(events.slice(1)).toEqual([{ kind: "recovered", path, dropped: 5 }]);
    expect(readFileSync(path, "utf8")).toBe(line(6));
  });

  it("a file removed (or its folder) is created again at the next line, without losing it", async () => {
    const path = join(dir, "logs", "autoscan.log");
    const { file, events } = open(path);
    await writeOne(file, line(1));
    rmSync(path);
    expect(await writeOne(file, line(2))).toBe(true);
    expect(readFileSync(path, "utf8")).toBe(line(2));
    rmSync(join(dir, "logs"), { recursive: true });
    expect(await writeOne(file, line(3))).toBe(true);
    file.close();
    expect(readFileSync(path, "utf8")).toBe(line(3));
    expect(events).toEqual([]);
  });

  it("writes after close are dropped quietly (a late log line at exit), not thrown", async () => {
    const path = join(dir, "autoscan.log");
    const { file, events } = open(path);
    await writeOne(file, line(1));
    file.close();
    expect(() => file.write(line(2))).not.toThrow();
    await file.flushed();
    expect(existsSync(path) && readFileSync(path, "utf8")).toBe(line(1));
    expect(events).toEqual([]);
  });
});

function probeMount(): string | undefined {
  let probe: string | undefined;
  try {
    probe = mkdtempSync(join(tmpdir(), "autoscan-mountprobe-"));
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe], { stdio: "pipe" });
    const immutable = tryRun("chattr", ["+i", probe]);
    tryRun("chattr", ["-i", probe]);
    execFileSync("umount", [probe], { stdio: "pipe" });
    return immutable ? undefined : "chattr +i is not supported on tmpfs here";
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    return stderr || (error as Error).message;
  } finally {
    if (probe) tryRun("rmdir", [probe]);
  }
}

function tryRun(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: "pipe" });
    return true;
  } catch {
    return false;
  }
}
