// @module-tag process
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { captureLog, makeTempDir } from "../../test/support/capture-log.ts";
import type { ScanRequest } from "../core/scan.ts";
import { createDiskProbe, type DiskEntry } from "../paths/disk-probe.ts";
import { createPathMapper } from "../paths/mapping.ts";
import { createKindResolver } from "./resolve-kind.ts";
import { requestFolder } from "./rules/enqueue.ts";

const manual = (path: string): ScanRequest => ({ path, kind: "unknown", source: "Manual", event: "Manual" });

let temp: { dir: string; cleanup(): Promise<void> };
beforeEach(async () => void (temp = await makeTempDir("autoscan-resolve-kind-")));
afterEach(async () => temp.cleanup());

function resolver(statPath?: (path: string) => Promise<DiskEntry>, timeoutMs?: number) {
  const logs = captureLog();
  // autoscan finds /movies/ under <temp>/rclone (SERVER_FILE_EXIST_PATH_MAPPINGS), or under <temp>/mnt (a form).
  const mapper = createPathMapper({
    mappings: { "/movies/": [join(temp.dir, "mnt", "movies")] },
    existMappings: { [join(temp.dir, "rclone", "movies")]: ["/movies/"] },
  });
  const resolve = createKindResolver({
    localForms: mapper.localForms,
    statPath: statPath ?? createDiskProbe({ log: logs.log }).stat,
    log: logs.log,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
  return { resolve, logs };
}

describe("createKindResolver", () => {
  it("finds a folder whose name looks like a file, through the exist mapping, and the scan stays on it", async () => {
    await mkdir(join(temp.dir, "rclone", "movies", "The.Matrix.1999.1080p"), { recursive: true });
    const { resolve } = resolver();
    const resolved = await resolve(manual("/movies/The.Matrix.1999.1080p"));
    expect(resolved).toEqual({ ...manual("/movies/The.Matrix.1999.1080p"), kind: "folder" });
    expect(requestFolder(resolved).folder).toBe("/movies/The.Matrix.1999.1080p");
  });

  it("finds a file through a SERVER_PATH_MAPPINGS form, so its folder is scanned", async () => {
    await mkdir(join(temp.dir, "mnt", "movies", "Heat (1995)"), { recursive: true });
    await writeFile(join(temp.dir, "mnt", "movies", "Heat (1995)", "Heat"), "a file without an extension");
    const { resolve } = resolver();
    const resolved = await resolve(manual("/movies/Heat (1995)/Heat"));
    expect(resolved.kind).toBe("file");
    expect(requestFolder(resolved).folder).toBe("/movies/Heat (1995)");
  });

  it("finds a name written in the other Unicode spelling, and keeps the received bytes", async () => {
    await mkdir(join(temp.dir, "rclone", "movies", "Ame\u0301lie.2001.1080p"), { recursive: true });
    const { resolve } = resolver();
    const asked = manual("/movies/Am\u00e9lie.2001.1080p");
    expect(await resolve(asked)).toEqual({ ...asked, kind: "folder" });
  });

  it("leaves a path it cannot find unknown: scanned as given, never its parent", async () => {
    const { resolve } = resolver();
    const resolved = await resolve(manual("/movies/Show.S01"));
    expect(resolved.kind).toBe("unknown");
    expect(requestFolder(resolved).folder).toBe("/movies/Show.S01");
  });

  it("answers within its timeout when the disk does not, and leaves the path unknown", async () => {
    const never = (): Promise<DiskEntry> => new Promise(() => undefined);
    const { resolve, logs } = resolver(never, 50);
    const started = Date.now();
    const resolved = await resolve(manual("/movies/The.Matrix.1999.1080p"));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(resolved.kind).toBe("unknown");
    expect(logs.messages().some((m) => m.includes("no answer from the disk within 50 ms"))).toBe(true);
  });

  it("takes a trailing slash for a folder without a look, and passes known kinds through", async () => {
    const looked: string[] = [];
    const { resolve } = resolver(async (path) => (looked.push(path), "missing"));
    expect((await resolve(manual("/movies/X.2020/"))).kind).toBe("folder");
    const file: ScanRequest = { path: "/movies/X/x.mkv", kind: "file", source: "Radarr", event: "Download" };
    expect(await resolve(file)).toBe(file);
    expect(looked).toEqual([]);
  });
});
