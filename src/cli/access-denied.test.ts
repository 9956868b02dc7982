import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { describeAccessDenied } from "./access-denied.ts";

/** An error as Node's fs raises it. */
function fsError(code: string, syscall: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${syscall} '${path}'`), { code, syscall, path, errno: -13 });
}

describe("describeAccessDenied", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "autoscan-access-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("names the user autoscan runs as, the folder's owner, and the chown that fixes it", async () => {
    const config = join(dir, "config");
    await mkdir(config);
    await chmod(config, 0o755);
    // As root the folder is given to 1000:1000 (the image's default user); otherwise it stays ours.
    const root = process.getuid?.() === 0;
    if (root) await chown(config, 1000, 1000);
    const owner = root ? "1000:1000" : `${String(process.getuid?.())}:${String(process.getgid?.())}`;
    const [uid, gid] = owner.split(":");
    const text = describeAccessDenied(fsError("EACCES", "open", join(config, "config.json")), { uid: 1234, gid: 2345 });
    expect(text).toBe(
      [
        `cannot create ${join(config, "config.json")}: permission denied.`,
        `  autoscan runs as uid 1234, gid 2345; ${config} belongs to uid ${uid}, gid ${gid} (mode 755).`,
        `  Fix: sudo chown 1234:2345 ${config} (in Docker: on the host side of the mount), ` +
          `or run autoscan as ${owner} (Docker: PUID/PGID or --user; systemd: User=).`,
      ].join("\n"),
    );
  });

  it("speaks of the file itself when it exists, and offers no run-as-root advice", async () => {
    const file = join(dir, "config.json");
    await writeFile(file, "{}");
    await chmod(file, 0o600);
    const text = describeAccessDenied(fsError("EACCES", "open", file), { uid: 1234, gid: 1234 }) ?? "";
    expect(text).toContain(`cannot use ${file}: permission denied.`);
    expect(text).toContain(`${file} belongs to uid ${String(process.getuid?.())}`);
    expect(text).toContain(`Fix: sudo chown 1234:1234 ${file}`);
    if (process.getuid?.() === 0) expect(text).not.toContain("run autoscan as 0:0");
  });

  it("tells a read-only mount apart", () => {
    const text = describeAccessDenied(fsError("EROFS", "open", join(dir, "autoscan.lock")), { uid: 1000, gid: 1000 });
    expect(text).toContain(": read-only file system.");
    expect(text).toContain("no :ro on the /config volume");
  });

  it.each([
    ["another code", Object.assign(new Error("x"), { code: "ENOSPC", path: "/config/queue.db" })],
    ["no path", Object.assign(new Error("x"), { code: "EACCES" })],
    ["not an error", "EACCES"],
    ["nothing", undefined],
  ])("leaves other errors alone: %s", (_name, error) => {
    expect(describeAccessDenied(error, { uid: 1, gid: 1 })).toBeUndefined();
  });
});
