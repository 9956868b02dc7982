// @module-tag process
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { captureLog, makeTempDir } from "../../../test/support/capture-log.ts";
import { createDiskProbe } from "../../paths/disk-probe.ts";
import type { WorkItem, WorkRequest } from "./dispatch-port.ts";
import { checkItemFiles, type DiskEntry, type FileCheckSettings } from "./file-check.ts";

const NOW = 1_000_000;

function item(folder: string, requests: Partial<WorkRequest>[], checks = 0): WorkItem {
  return {
    id: 1,
    rev: 1,
    folder,
    files: [],
    priority: 0,
    checks,
    attempts: 0,
    requests: requests.map((r) => ({ path: "", kind: "file", deleted: false, source: "Sonarr", event: "Download", ...r })),
  };
}

function settings(disk: Record<string, DiskEntry>, extra: Partial<FileCheckSettings> = {}) {
  const logs = captureLog();
  const missingCalls: string[] = [];
  const value: FileCheckSettings = {
    maxChecks: 3,
    delayMs: 60_000,
    folderOnExhaustion: false,
    localForms: (path) => [`/local${path}`],
    statPath: async (path) => disk[path] ?? "missing",
    log: logs.log,
    onFileMissing: async (path) => void missingCalls.push(path),
    ...extra,
  };
  return { value, logs, missingCalls };
}

describe("checkItemFiles", () => {
  it("is ready when every requested file exists, listing the files", async () => {
    const s = settings({ "/local/tv/S1/e1.mkv": "file", "/local/tv/S1/e2.mkv": "file" });
    const result = await checkItemFiles(item("/tv/S1", [{ path: "/tv/S1/e1.mkv" }, { path: "/tv/S1/e2.mkv" }]), NOW, s.value);
    expect(result).toEqual({ kind: "ready", checks: 1, scanFolder: "/tv/S1", files: ["/tv/S1/e1.mkv", "/tv/S1/e2.mkv"] });
    expect(s.logs.messages()).toContain("File '/local/tv/S1/e1.mkv' exists on check 1 of 3.");
  });

  it("calls beforeFileCheck with the local forms before looking, so a refresh can make the file appear", async () => {
    const disk: Record<string, DiskEntry> = {};
    const seen: string[] = [];
    const s = settings(disk, {
      beforeFileCheck: async (request, forms) => {
        seen.push(`${request.path} → ${forms.join(",")}`);
        disk["/local/tv/S1/e1.mkv"] = "file"; // the refresh made the mount show it
      },
    });
    const result = await checkItemFiles(item("/tv/S1", [{ path: "/tv/S1/e1.mkv" }]), NOW, s.value);
    expect(seen).toEqual(["/tv/S1/e1.mkv → /local/tv/S1/e1.mkv"]);
    expect(result).toMatchObject({ kind: "ready", checks: 1, scanFolder: "/tv/S1" });
  });

  it("goes on checking when beforeFileCheck fails, with a warning", async () => {
    const s = settings({ "/local/tv/S1/e1.mkv": "file" }, { beforeFileCheck: async () => Promise.reject(new Error("rclone down")) });
    const result = await checkItemFiles(item("/tv/S1", [{ path: "/tv/S1/e1.mkv" }]), NOW, s.value);
    expect(result).toMatchObject({ kind: "ready" });
    expect(s.logs.messages().some((m) => m.includes("rclone down"))).toBe(true);
  });

  it("waits one check delay while a file is missing, and asks for a cache refresh", async () => {
    const s = settings({});
    const result = await checkItemFiles(item("/tv/S1", [{ path: "/tv/S1/e1.mkv" }]), NOW, s.value);
    expect(result).toEqual({ kind: "wait", checks: 1, waitMs: 60_000 });
    expect(s.logs.messages()).toContain(
      "File '/local/tv/S1/e1.mkv' did not exist on check 1 of 3. Checking again in 60 seconds...",
    );
    expect(s.missingCalls).toEqual(["/tv/S1/e1.mkv"]);
  });

  it("fails after the last check with the reason", async () => {
    const s = settings({});
    const result = await checkItemFiles(item("/tv/S1", [{ path: "/tv/S1/e1.mkv" }], 2), NOW, s.value);
    expect(result).toMatchObject({ kind: "failed", checks: 3 });
    expect(s.logs.messages()).toContain("File '/local/tv/S1/e1.mkv' not found after 3 check(s); not scanning '/tv/S1'.");
  });

  it("names the disk when a mapping reached the path, and the mapping when none did (looked for only as received)", async () => {
    const mapped = await checkItemFiles(item("/tv/S1", [{ path: "/tv/S1/e1.mkv" }], 2), NOW, settings({}).value);
    expect(mapped).toEqual({ kind: "failed", checks: 3, reason: "Not found after 3 file check(s): '/local/tv/S1/e1.mkv'" });

    const unmapped = await checkItemFiles(item("/tv/S1", [{ path: "/tv/S1/e1.mkv" }], 2), NOW, settings({}, { localForms: (path) => [path] }).value);
    expect(unmapped).toMatchObject({ kind: "failed", reason: expect.stringMatching(/^Not found after 3 file check\(s\): '\/tv\/S1\/e1\.mkv', looked for only at that path: no SERVER_PATH_MAPPINGS or SERVER_FILE_EXIST_PATH_MAPPINGS form reaches it/) });
  });

  it("checks once even when SERVER_MAX_FILE_CHECKS is 0, as plex_autoscan did", async () => {
    const s = settings({}, { maxChecks: 0 });
    const result = await checkItemFiles(item("/tv/S1", [{ path: "/tv/S1/e1.mkv" }]), NOW, s.value);
    expect(result).toMatchObject({ kind: "failed", checks: 1 });
  });

  it("falls back to the folder at the last check when asked to, and warns at the penultimate one", async () => {
    const s = settings({ "/local/tv/S1": "directory" }, { folderOnExhaustion: true });
    const penultimate = await checkItemFiles(item("/tv/S1", [{ path: "/tv/S1/e1.mkv" }], 1), NOW, s.value);
    expect(penultimate.kind).toBe("wait");
    expect(s.logs.messages().some((m) => m.includes("reached the penultimate file check"))).toBe(true);
    const last = await checkItemFiles(item("/tv/S1", [{ path: "/tv/S1/e1.mkv" }], 2), NOW, s.value);
    expect(last).toEqual({ kind: "ready", checks: 3, scanFolder: "/tv/S1", files: [] });
  });

  it("uses the first local form that exists", async () => {
    const s = settings(
      { "/mnt/b/tv/S1/e1.mkv": "file" },
      { localForms: (p) => [`/mnt/a${p}`, `/mnt/b${p}`] },
    );
    await checkItemFiles(item("/tv/S1", [{ path: "/tv/S1/e1.mkv" }]), NOW, s.value);
    expect(s.logs.messages()).toContain("File '/mnt/b/tv/S1/e1.mkv' exists on check 1 of 3.");
  });

  it("corrects the guess for unclassified paths from what is on disk", async () => {
    const dir = settings({ "/local/tv/Show.S01": "directory" });
    const asFolder = await checkItemFiles(item("/tv", [{ path: "/tv/Show.S01", kind: "unknown" }]), NOW, dir.value);
    expect(asFolder).toMatchObject({ kind: "ready", scanFolder: "/tv/Show.S01", files: [] });

    const file = settings({ "/local/tv/Show/README": "file" });
    const asFile = await checkItemFiles(item("/tv/Show/README", [{ path: "/tv/Show/README", kind: "unknown" }]), NOW, file.value);
    expect(asFile).toMatchObject({ kind: "ready", scanFolder: "/tv/Show", files: ["/tv/Show/README"] });
  });

  it("skips deletions, and is ready at once when only deletions were requested", async () => {
    const s = settings({});
    const result = await checkItemFiles(item("/tv/S1", [{ path: "/tv/S1/e1.mkv", deleted: true }]), NOW, s.value);
    expect(result).toEqual({ kind: "ready", checks: 0, scanFolder: "/tv/S1", files: [] });
  });
});

describe("checkItemFiles on a real disk, names in either Unicode spelling", () => {
  const NFC = "Pok\u00e9mon";
  const NFD = "Poke\u0301mon";
  let temp: { dir: string; cleanup(): Promise<void> };
  beforeEach(async () => void (temp = await makeTempDir("autoscan-file-check-")));
  afterEach(async () => temp.cleanup());

  function real(extra: Partial<FileCheckSettings> = {}) {
    const logs = captureLog();
    const missingCalls: string[] = [];
    const value: FileCheckSettings = {
      maxChecks: 3,
      delayMs: 60_000,
      folderOnExhaustion: false,
      localForms: (path) => [join(temp.dir, "local", path)],
      statPath: createDiskProbe({ log: logs.log }).stat,
      log: logs.log,
      onFileMissing: async (path) => void missingCalls.push(path),
      ...extra,
    };
    return { value, logs, missingCalls };
  }
  async function put(serverPath: string): Promise<void> {
    const local = join(temp.dir, "local", serverPath);
    await mkdir(dirname(local), { recursive: true });
    await writeFile(local, "x");
  }

  it.each([
    ["NFD on disk, asked in NFC", NFD, NFC],
    ["NFC on disk, asked in NFD", NFC, NFD],
  ])("%s: found, and scanned spelled as on disk", async (_name, onDisk, asked) => {
    await put(`/tv/${onDisk}/Season 01/${onDisk} - S01E01.mkv`);
    const s = real();
    const path = `/tv/${asked}/Season 01/${asked} - S01E01.mkv`;
    const result = await checkItemFiles(item(`/tv/${NFC}/Season 01`, [{ path }]), NOW, s.value);
    expect(result).toEqual({
      kind: "ready",
      checks: 1,
      scanFolder: `/tv/${onDisk}/Season 01`,
      files: [`/tv/${onDisk}/Season 01/${onDisk} - S01E01.mkv`],
    });
    expect(s.logs.messages()).toContain(`File '${join(temp.dir, "local")}/tv/${onDisk}/Season 01/${onDisk} - S01E01.mkv' exists on check 1 of 3.`);
  });

  it("finds a name spelled one way inside a folder spelled the other way", async () => {
    // Sonarr made the show folder on Linux (NFC); a Mac copied the episode in over SMB (NFD).
    await put(`/tv/${NFC}/${NFD} - S01E01.mkv`);
    const s = real();
    const result = await checkItemFiles(item(`/tv/${NFC}`, [{ path: `/tv/${NFD}/${NFD} - S01E01.mkv` }]), NOW, s.value);
    expect(result).toMatchObject({ kind: "ready", scanFolder: `/tv/${NFC}`, files: [`/tv/${NFC}/${NFD} - S01E01.mkv`] });
  });

  it("respells only the part after the mapped prefix, never autoscan's own mount", async () => {
    const mount = join(temp.dir, `mnt-${NFD}`);
    await mkdir(join(mount, NFD), { recursive: true });
    await writeFile(join(mount, NFD, "e01.mkv"), "x");
    const s = real({ localForms: (path) => [path.replace(/^\/data/, mount)] });
    const result = await checkItemFiles(item(`/data/${NFC}`, [{ path: `/data/${NFC}/e01.mkv` }]), NOW, s.value);
    expect(result).toMatchObject({ kind: "ready", scanFolder: `/data/${NFD}`, files: [`/data/${NFD}/e01.mkv`] });
  });

  it("waits, as before, for a name that is on disk in neither spelling", async () => {
    await mkdir(join(temp.dir, "local", "tv", NFD), { recursive: true });
    const s = real();
    const result = await checkItemFiles(item(`/tv/${NFC}`, [{ path: `/tv/${NFC}/e01.mkv` }]), NOW, s.value);
    expect(result).toEqual({ kind: "wait", checks: 1, waitMs: 60_000 });
    expect(s.missingCalls).toEqual([`/tv/${NFC}/e01.mkv`]);
  });

  it("looks once at two spellings of one file, which merged into one item", async () => {
    await put(`/tv/${NFD}/e01.mkv`);
    const s = real();
    const result = await checkItemFiles(
      item(`/tv/${NFC}`, [{ path: `/tv/${NFC}/e01.mkv` }, { path: `/tv/${NFD}/e01.mkv` }]),
      NOW,
      s.value,
    );
    expect(result).toEqual({ kind: "ready", checks: 1, scanFolder: `/tv/${NFD}`, files: [`/tv/${NFD}/e01.mkv`] });
    expect(s.logs.messages().filter((m) => m.includes("exists on check"))).toHaveLength(1);
  });

  it("scans a deletion's folder in the bytes the sender used, not the item's NFC key", async () => {
    const s = real();
    const deleted = { path: `/movies/Am\u0065\u0301lie (2001)/Am\u0065\u0301lie.mkv`, deleted: true, event: "MovieFileDelete" };
    const result = await checkItemFiles(item("/movies/Am\u00e9lie (2001)", [deleted]), NOW, s.value);
    expect(result).toEqual({ kind: "ready", checks: 0, scanFolder: "/movies/Am\u0065\u0301lie (2001)", files: [] });
  });

  it("falls back to the folder as spelled on disk at the last check", async () => {
    await mkdir(join(temp.dir, "local", "tv", NFD), { recursive: true });
    const s = real({ folderOnExhaustion: true });
    const result = await checkItemFiles(item(`/tv/${NFC}`, [{ path: `/tv/${NFC}/e01.mkv` }], 2), NOW, s.value);
    expect(result).toEqual({ kind: "ready", checks: 3, scanFolder: `/tv/${NFD}`, files: [] });
  });

  it("never counts a look the disk did not answer as missing: it says so, asks no cache refresh, and never fails the folder", async () => {
    const s = real({ statPath: async () => "unanswered" });
    const local = `${join(temp.dir, "local")}/tv/S1/e1.mkv`;
    const result = await checkItemFiles(item("/tv/S1", [{ path: "/tv/S1/e1.mkv" }]), NOW, s.value);
    expect(result).toEqual({ kind: "unanswered", local });
    expect(s.logs.messages()).toContain(`'${local}' could not be looked at (the disk did not answer); the folder waits for its mount.`);
    expect(s.missingCalls).toEqual([]);
    // On what would be its last check too.
    const last = await checkItemFiles(item("/tv/S1", [{ path: "/tv/S1/e1.mkv" }], 2), NOW, s.value);
    expect(last).toEqual({ kind: "unanswered", local });
  });

  it("looks at a folder's files one after the other (one stat in flight per folder), stopping at one the disk did not answer", async () => {
    let inFlight = 0;
    let most = 0;
    const looked: string[] = [];
    const s = real({
      statPath: async (path) => {
        looked.push(path);
        most = Math.max(most, ++inFlight);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight--;
        return path.endsWith("e2.mkv") ? "unanswered" : "missing";
      },
    });
    const requests = [{ path: "/tv/S1/e1.mkv" }, { path: "/tv/S1/e2.mkv" }, { path: "/tv/S1/e3.mkv" }];
    const result = await checkItemFiles(item("/tv/S1", requests), NOW, s.value);
    expect(result.kind).toBe("unanswered");
    expect(most).toBe(1);
    expect(looked.some((path) => path.includes("e3.mkv"))).toBe(false);
  });
});
