// @module-tag process
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { captureLog, makeTempDir } from "../../test/support/capture-log.ts";
import { createManualClock, type ManualClock } from "../../test/support/manual-clock.ts";
import { createAnchorWatch, guardServerPath, type AnchorWatch, type AnchorWatchOptions } from "./anchors.ts";
import { createDiskProbe, type DiskEntry } from "./disk-probe.ts";

let temp: { dir: string; cleanup(): Promise<void> };
let clock: ManualClock;
let logs: ReturnType<typeof captureLog>;
let watch: AnchorWatch | undefined;
/** Looks at the disk still running: `settle` waits for them, so a poll's real stat finishes before time moves on. */
let looking: Set<Promise<DiskEntry>>;

const anchorA = (): string => join(temp.dir, "mnt", "a", ".anchor");
const anchorB = (): string => join(temp.dir, "mnt", "b", ".anchor");

beforeEach(async () => {
  temp = await makeTempDir("autoscan-anchors-");
  clock = createManualClock();
  logs = captureLog();
  looking = new Set();
  for (const anchor of [anchorA(), anchorB()]) {
    await mkdir(join(anchor, ".."), { recursive: true });
    await writeFile(anchor, "");
  }
});

afterEach(async () => {
  watch?.stop();
  watch = undefined;
  await temp.cleanup();
});

function create(options: Partial<AnchorWatchOptions> = {}): AnchorWatch {
  const probe = createDiskProbe({ log: logs.log, timeoutMs: 2_000 });
  watch = createAnchorWatch({
    anchors: [anchorA(), anchorB()],
    stat: (path) => {
      const look = probe.stat(path);
      looking.add(look);
      void look.finally(() => looking.delete(look));
      return look;
    },
    clock,
    log: logs.log,
    ...options,
  });
  return watch;
}

async function settle(): Promise<void> {
  while (looking.size > 0) await Promise.all([...looking]);
  await new Promise((resolve) => setImmediate(resolve));
}

const anchorLines = (level: number) => logs.records.filter((r) => r.component === "ANCHOR" && r.level === level);

describe("anchor watch", () => {
  it("guards everything until the first look, then lets present anchors go without a word", async () => {
    const w = create();
    const under = join(temp.dir, "mnt", "a", "TV", "Show");
    expect(w.guardOf(under)).toEqual({ anchor: anchorA() });
    expect(w.missing().map((m) => m.anchor)).toEqual([anchorA(), anchorB()]);
    const returned: string[] = [];
    w.onReturn((anchor) => void returned.push(anchor));
    await w.check();
    expect(w.guardOf(under)).toBeUndefined();
    expect(w.missing()).toEqual([]);
    expect(returned.sort()).toEqual([anchorA(), anchorB()].sort());
    expect(logs.records.filter((r) => r.component === "ANCHOR")).toEqual([]);
  });

  it("counts an anchor not there at start as missing, with one warning naming it and its folder", async () => {
    await rm(anchorA());
    const w = create();
    await w.check();
    await w.check();
    const folder = join(temp.dir, "mnt", "a");
    expect(anchorLines(40).map((r) => r.msg)).toEqual([
      `Anchor '${anchorA()}' is missing: scans of folders under '${folder}' wait until it is back (is the mount down?)`,
    ]);
    expect(w.missing()).toEqual([{ anchor: anchorA(), since: clock.now() }]);
    expect(w.guardOf(join(temp.dir, "mnt", "b", "Movies"))).toBeUndefined();
  });

  it("guards on whole segments: the folder, below it, and a folder that holds it, never a sibling", async () => {
    await rm(anchorA());
    const w = create();
    await w.check();
    const a = join(temp.dir, "mnt", "a");
    for (const path of [a, `${a}/`, join(a, "TV", "e1.mkv"), join(temp.dir, "mnt"), "/"]) {
      expect(w.guardOf(path), path).toEqual({ anchor: anchorA() });
    }
    for (const path of [`${a}4K`, join(`${a}4K`, "x.mkv"), join(temp.dir, "mnt", "b", "x"), join(temp.dir, "mnt", "ab")]) {
      expect(w.guardOf(path), path).toBeUndefined();
    }
  });

  it("compares in NFC: a folder spelled in NFD is guarded by an anchor written in NFC", async () => {
    const nfc = join(temp.dir, "Séries".normalize("NFC"));
    await mkdir(nfc, { recursive: true });
    const w = create({ anchors: [join(nfc, ".anchor")] });
    await w.check();
    expect(w.guardOf(join(temp.dir, "Séries".normalize("NFD"), "Show"))).toEqual({ anchor: join(nfc, ".anchor") });
  });

  it("polls every interval: one warning when an anchor goes, one info line when it is back, never one per look", async () => {
    const w = create({ intervalMs: 5_000 });
    const held: string[] = [];
    w.onReturn((anchor) => {
      held.push(anchor);
      return anchor === anchorA() ? 3 : 0;
    });
    w.start();
    await settle();
    expect(w.guardOf(anchorA())).toBeUndefined();

    await rm(anchorA());
    for (let i = 0; i < 6; i++) await clock.advance(5_000, settle);
    expect(w.guardOf(join(temp.dir, "mnt", "a", "x"))).toEqual({ anchor: anchorA() });
    expect(anchorLines(40)).toHaveLength(1);
    expect(anchorLines(30)).toHaveLength(0);

    held.length = 0;
    await writeFile(anchorA(), "");
    for (let i = 0; i < 6; i++) await clock.advance(5_000, settle);
    expect(w.guardOf(join(temp.dir, "mnt", "a", "x"))).toBeUndefined();
    expect(held).toEqual([anchorA()]);
    expect(anchorLines(40)).toHaveLength(1);
    const infos = anchorLines(30);
    expect(infos).toHaveLength(1);
    expect(infos[0]?.msg).toMatch(new RegExp(`^Anchor '${anchorA()}' is back after 3\\d s: 3 held folder\\(s\\) go out now\\.$`));
  });

  it("stops cleanly: no timer left, no look after stop", async () => {
    const w = create({ intervalMs: 5_000 });
    w.start();
    await settle();
    expect(clock.pendingTimers()).toBe(1);
    w.stop();
    await settle();
    expect(clock.pendingTimers()).toBe(0);
    await rm(anchorA());
    await clock.advance(60_000, settle);
    expect(w.guardOf(anchorA())).toBeUndefined();
  });

  it("shares one look among concurrent checks", async () => {
    let stats = 0;
    const w = create({
      stat: async () => {
        stats++;
        return "file";
      },
    });
    await Promise.all([w.check(), w.check(), w.check()]);
    expect(stats).toBe(2);
  });

  it("maps a server path to its local forms before asking (guardServerPath)", async () => {
    await rm(anchorA());
    const w = create();
    await w.check();
    const local = join(temp.dir, "mnt", "a");
    const guard = guardServerPath(w, (server) => [server, server.replace(/^\/data\/TV/, local)]);
    expect(guard("/data/TV/Show/Season 01")).toEqual({ anchor: anchorA() });
    expect(guard("/data/Movies/Heat")).toBeUndefined();
  });

  it("takes a reload: a dropped anchor lets its folders go at once, a new one guards until its first look", async () => {
    await rm(anchorA());
    const w = create({ anchors: [], intervalMs: 5_000 });
    w.start();
    expect(clock.pendingTimers()).toBe(0);
    const released: string[] = [];
    w.onReturn((anchor) => void released.push(anchor));

    w.reconfigure([anchorA(), anchorB()]);
    expect(w.guardOf(join(temp.dir, "mnt", "b", "x"))).toEqual({ anchor: anchorB() });
    await settle();
    expect(w.guardOf(join(temp.dir, "mnt", "b", "x"))).toBeUndefined();
    expect(w.guardOf(join(temp.dir, "mnt", "a", "x"))).toEqual({ anchor: anchorA() });
    expect(clock.pendingTimers()).toBe(1);

    w.reconfigure([anchorB()]);
    expect(w.guardOf(join(temp.dir, "mnt", "a", "x"))).toBeUndefined();
    expect(released).toEqual([anchorB(), anchorA()]);
    expect(anchorLines(30).map((r) => r.msg)).toEqual([
      `Anchor '${anchorA()}' is no longer in SERVER_ANCHORS: scans under '${join(temp.dir, "mnt", "a")}' go on.`,
    ]);
    w.reconfigure([]);
    await settle();
    expect(clock.pendingTimers()).toBe(0);
  });

  it("watches nothing without anchors", async () => {
    const w = create({ anchors: [] });
    w.start();
    expect(clock.pendingTimers()).toBe(0);
    await w.check();
    expect(w.guardOf("/anything")).toBeUndefined();
  });
});
