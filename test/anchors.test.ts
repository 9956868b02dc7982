import { queueAdminFromScanQueue } from "../src/web/from-config.ts";
import { TEST_PASS, buildWebApp } from "./support/web-builders.ts";
import { mkdirSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { ScanContext, ScanOutcome } from "../src/core/target.ts";
import { createLogger } from "../src/logging/create-logger.ts";
import { createAnchorWatch, guardServerPath, type AnchorWatch } from "../src/paths/anchors.ts";
import { createDiskProbe } from "../src/paths/disk-probe.ts";
import { createPathMapper } from "../src/paths/mapping.ts";
import { createPlex, type Plex } from "../src/targets/plex/create-plex.ts";
import type { DispatchAnchors } from "../src/queue/dispatch/holds.ts";
import type { DispatcherOptions } from "../src/queue/dispatch/dispatcher.ts";
import { renderQueuePage } from "../src/web/console/queue-page.ts";
import { captureLog, makeTempDir } from "./support/capture-log.ts";
import { createFakeTarget, deferred, type FakeTarget } from "./support/fake-target.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { describeFaults } from "./support/faults/describe-faults.ts";
import { cleanupMounts, mountHungFuse, probeFuse } from "./support/faults/mounts.ts";
import { createManualClock } from "./support/manual-clock.ts";
import { createSteppingClock } from "./support/plex-clock.ts";
import { createLibraryFixture, type LibraryFixture } from "./support/plex-library-db.ts";
import { SCAN_DELAY_MS, createQueueHarness, fileRequest, type QueueHarness } from "./support/queue-harness.ts";

/**
 * SERVER_ANCHORS through the real queue and dispatcher: two mounts on autoscan's disk (`<media>/mnt/a` and
 * `<media>/mnt/b`), each with an anchor file; server paths `/mnt/…` are found under `<media>` (the harness's forms).
 */
interface Mounts {
  readonly h: QueueHarness;
  readonly plex: FakeTarget;
  readonly watch: AnchorWatch;
  readonly anchorLogs: ReturnType<typeof captureLog>;
  readonly media: string;
  readonly anchorA: string;
  readonly anchorB: string;
}

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function setupMounts(options: { dispatcher?: Partial<DispatcherOptions>; respond?: FakeTarget["respond"] } = {}): Promise<Mounts> {
  const temp = await makeTempDir("autoscan-anchors-");
  cleanup.push(() => temp.cleanup());
  const media = join(temp.dir, "media");
  const anchorA = join(media, "mnt", "a", ".anchor");
  const anchorB = join(media, "mnt", "b", ".anchor");
  for (const anchor of [anchorA, anchorB]) {
    await mkdir(join(anchor, ".."), { recursive: true });
    await writeFile(anchor, "");
  }
  const clock = createManualClock();
  const anchorLogs = captureLog();
  const watch = createAnchorWatch({
    anchors: [anchorA, anchorB],
    stat: createDiskProbe({ log: anchorLogs.log, timeoutMs: 2_000 }).stat,
    clock,
    log: anchorLogs.log,
  });
  await watch.check();
  // What the wiring composes: the dispatcher asks about server paths, the watch knows local ones.
  const localForms = (path: string): string[] => [join(media, path)];
  const anchors: DispatchAnchors = { guard: guardServerPath(watch, localForms), onReturn: watch.onReturn, check: watch.check };
  const plex = createFakeTarget("plex", options.respond);
  const h = await createQueueHarness({ targets: [plex], dir: temp.dir, clock, dispatcher: { anchors, ...options.dispatcher } });
  cleanup.push(() => h.close());
  return { h, plex, watch, anchorLogs, media, anchorA, anchorB };
}

const pendingByFolder = async (h: QueueHarness) => new Map((await h.queue.listPending()).map((item) => [item.folder, item]));
const anchorLines = (m: Mounts, level: number) => m.anchorLogs.records.filter((r) => r.component === "ANCHOR" && r.level === level);

describe("anchors hold the folders of their mount", () => {
  it("while an anchor is missing nothing goes out for its mount, the other mount goes on; back, the held folders go out once", async () => {
    const m = await setupMounts();
    const { h, plex } = m;
    await rm(m.anchorA);
    await m.watch.check();

    // Requests arrive for both mounts while mount a's anchor is missing.
    for (let n = 1; n <= 3; n++) {
      for (const path of [`/mnt/a/TV/Show/e${n}.mkv`, `/mnt/b/Movies/M${n}/m.mkv`]) {
        await h.touch(path);
        await h.enqueue(fileRequest(path, "Sonarr"));
      }
      await h.advance(1_000);
    }
    await h.touch("/mnt/a/Movies/X/x.mkv");
    await h.enqueue(fileRequest("/mnt/a/Movies/X/x.mkv", "Radarr"));
    await h.advance(SCAN_DELAY_MS);
    expect(plex.folders().sort()).toEqual(["/mnt/b/Movies/M1", "/mnt/b/Movies/M2", "/mnt/b/Movies/M3"]);

    // An hour later: still nothing for mount a, and nothing spent or recorded against its folders.
    await h.advance(60 * 60_000);
    await h.touch("/mnt/a/TV/Show/e4.mkv");
    await h.enqueue(fileRequest("/mnt/a/TV/Show/e4.mkv", "Sonarr"));
    await h.advance(2 * SCAN_DELAY_MS);
    expect(plex.calls).toHaveLength(3);
    const waiting = await pendingByFolder(h);
    expect([...waiting.keys()].sort()).toEqual(["/mnt/a/Movies/X", "/mnt/a/TV/Show"]);
    for (const item of waiting.values()) {
      expect(item).toMatchObject({ state: "pending", fileChecks: 0, attempts: 0 });
      expect(item.lastError).toBeUndefined();
    }
    const held = h.dispatcher.activity().held;
    expect(held.map((x) => x.id).sort()).toEqual([...waiting.values()].map((x) => x.id).sort());
    expect(held.every((x) => x.anchor === m.anchorA)).toBe(true);
    expect(anchorLines(m, 40).map((r) => r.msg)).toEqual([
      `Anchor '${m.anchorA}' is missing: scans of folders under '${join(m.media, "mnt", "a")}' wait until it is back (is the mount down?)`,
    ]);

    // Back: everything held goes out, once.
    await writeFile(m.anchorA, "");
    await m.watch.check();
    await h.settle();
    expect(plex.folders().slice(3).sort()).toEqual(["/mnt/a/Movies/X", "/mnt/a/TV/Show"]);
    const show = plex.calls.find((call) => call.folder === "/mnt/a/TV/Show");
    expect(show?.context.files).toHaveLength(4);
    await h.advance(10 * SCAN_DELAY_MS);
    expect(plex.calls).toHaveLength(5);
    expect(await h.queue.pendingCount()).toBe(0);
    expect(h.dispatcher.activity().held).toEqual([]);
    expect(anchorLines(m, 40)).toHaveLength(1);
    expect(anchorLines(m, 30).map((r) => r.msg)).toEqual([
      expect.stringMatching(new RegExp(`^Anchor '${m.anchorA}' is back after \\d+ s: 2 held folder\\(s\\) go out now\\.$`)),
    ]);
  });

  it("a mount that drops between two looks: the check that misses the files looks at the anchors first and spends nothing", async () => {
    const m = await setupMounts();
    const { h, plex } = m;
    await h.touch("/mnt/a/TV/Show/e1.mkv");
    await h.enqueue(fileRequest("/mnt/a/TV/Show/e1.mkv"));
    // The whole mount goes: the anchor and the files with it; the watch has not looked since.
    const mount = join(m.media, "mnt", "a");
    await rename(mount, `${mount}-down`);
    expect(m.watch.guardOf(mount)).toBeUndefined();
    await h.advance(SCAN_DELAY_MS);
    await h.advance(5 * 60_000);
    expect(plex.calls).toHaveLength(0);
    expect((await h.queue.listPending())[0]).toMatchObject({ folder: "/mnt/a/TV/Show", fileChecks: 0, attempts: 0 });
    expect(h.dispatcher.activity().held).toEqual([{ id: (await h.queue.listPending())[0]?.id, anchor: m.anchorA }]);

    await rename(`${mount}-down`, mount);
    await m.watch.check();
    await h.settle();
    expect(plex.folders()).toEqual(["/mnt/a/TV/Show"]);
    expect(plex.calls[0]?.context.files).toEqual(["/mnt/a/TV/Show/e1.mkv"]);
  });

  it("a held folder does not block the folder of another mount behind it in the same file-check batch", async () => {
    const m = await setupMounts({ dispatcher: { checkConcurrency: 1 } });
    const { h, plex } = m;
    await rm(m.anchorA);
    await m.watch.check();
    await h.touch("/mnt/a/TV/Show/e1.mkv");
    await h.touch("/mnt/b/Movies/M/m.mkv");
    // One enqueue: both due at the same instant, mount a's first in dispatch order, one check slot.
    await h.queue.enqueue([fileRequest("/mnt/a/TV/Show/e1.mkv"), fileRequest("/mnt/b/Movies/M/m.mkv")]);
    await h.advance(SCAN_DELAY_MS);
    expect(plex.folders()).toEqual(["/mnt/b/Movies/M"]);
    expect((await pendingByFolder(h)).get("/mnt/a/TV/Show")).toMatchObject({ fileChecks: 0 });
  });

  it("a checked folder whose anchor goes before its scan is held, and the folder of another mount behind it is sent", async () => {
    const busy = deferred<ScanOutcome>();
    const m = await setupMounts({ respond: (folder) => (folder === "/mnt/b/First" ? busy.promise : { status: "scanned" }) });
    const { h, plex } = m;
    await h.touch("/mnt/b/First/f.mkv");
    await h.enqueue(fileRequest("/mnt/b/First/f.mkv"));
    await h.advance(SCAN_DELAY_MS);
    expect(plex.folders()).toEqual(["/mnt/b/First"]);
    // Two folders checked and waiting for the one slot of the busy target: mount a's first in dispatch order.
    await h.touch("/mnt/a/TV/Show/e1.mkv");
    await h.touch("/mnt/b/Movies/M/m.mkv");
    await h.queue.enqueue([fileRequest("/mnt/a/TV/Show/e1.mkv"), fileRequest("/mnt/b/Movies/M/m.mkv")]);
    await h.advance(SCAN_DELAY_MS);
    expect((await pendingByFolder(h)).get("/mnt/a/TV/Show")).toMatchObject({ fileChecks: 1 });
    await rm(m.anchorA);
    await m.watch.check();
    busy.resolve({ status: "scanned" });
    await h.settle();
    expect(plex.folders()).toEqual(["/mnt/b/First", "/mnt/b/Movies/M"]);
    expect((await pendingByFolder(h)).get("/mnt/a/TV/Show")).toMatchObject({ attempts: 0 });

    await writeFile(m.anchorA, "");
    await m.watch.check();
    await h.settle();
    expect(plex.folders()).toEqual(["/mnt/b/First", "/mnt/b/Movies/M", "/mnt/a/TV/Show"]);
  });

  it("shows a held folder on the Queue page as waiting for its anchor", async () => {
    const m = await setupMounts();
    const { h } = m;
    await rm(m.anchorA);
    await m.watch.check();
    await h.touch("/mnt/a/TV/<Show>/e1.mkv");
    await h.enqueue(fileRequest("/mnt/a/TV/<Show>/e1.mkv"));
    await h.advance(SCAN_DELAY_MS);
    const html = renderQueuePage({
      shell: { base: "/pass", drive: false, csrf: "token" },
      items: await h.queue.listPending(),
      total: 1,
      offset: 0,
      pageSize: 50,
      now: h.clock.now(),
      activity: h.dispatcher.activity(),
      targets: ["plex"],
      self: "/pass/queue",
    });
    expect(html).toContain(`<span class="badge warn">waiting for anchor ${m.anchorA}</span>`);
    // And in the API's queue, for scripts.
    const { app } = buildWebApp({ queue: queueAdminFromScanQueue(h.queue), console: { activity: () => h.dispatcher.activity() } });
    const answer = (await (await app.request(`/api/${TEST_PASS}?cmd=queue`)).json()) as { queue: Record<string, unknown>[] };
    expect(answer.queue[0]).toMatchObject({ folder: "/mnt/a/TV/<Show>", waitingForAnchor: m.anchorA });
  });
});

describe("emptying the trash", () => {
  let fixture: LibraryFixture | undefined;
  let fakePlex: FakePlex | undefined;
  let built: Plex | undefined;
  afterEach(async () => {
    built?.close();
    fixture?.close();
    await fakePlex?.close();
    built = undefined;
    fixture = undefined;
    fakePlex = undefined;
  });

  it("is refused for a section under a missing anchor, with the anchor named, and runs once it is back", async () => {
    const temp = await makeTempDir("autoscan-anchor-trash-");
    cleanup.push(() => temp.cleanup());
    const local = join(temp.dir, "mnt");
    const anchor = join(local, "Movies", ".anchor");
    mkdirSync(join(local, "Movies"), { recursive: true });
    mkdirSync(join(local, "TV"), { recursive: true });
    fixture = createLibraryFixture(join(temp.dir, "com.plexapp.plugins.library.db"));
    const movies = fixture.addSection({ name: "Movies", type: "movie", roots: ["/data/Movies"] });
    const tv = fixture.addSection({ name: "TV", type: "show", roots: ["/data/TV"] });
    fixture.addMovie({ sectionId: movies, title: "Gone", file: "/data/Movies/Gone/Gone.mkv", size: 1, deleted: true });
    fixture.seal();
    fakePlex = await startFakePlex({
      sections: [
        { key: movies, title: "Movies", type: "movie", locations: ["/data/Movies"] },
        { key: tv, title: "TV", type: "show", locations: ["/data/TV"] },
      ],
    });
    const logs = captureLog();
    const watch = createAnchorWatch({ anchors: [anchor], stat: createDiskProbe({ log: logs.log }).stat, clock: createManualClock(), log: logs.log });
    await watch.check();
    const mapper = createPathMapper({ mappings: { "/data/": [`${local}/`] } });
    const lines: string[] = [];
    const handle = createLogger({ level: "debug", format: "json", stream: { write: (line: string) => lines.push(line) } });
    built = createPlex({
      url: fakePlex.url,
      token: fakePlex.token,
      clock: createSteppingClock(),
      log: handle.log,
      checkBeforeScan: false,
      waitForExternalScanners: false,
      analyze: { type: "off", directory: true },
      emptyTrash: { enabled: true, maxFiles: 100, controlFiles: [], zeroDeleted: true, guard: guardServerPath(watch, mapper.localForms) },
      databasePath: fixture.path,
    });
    const context = (): ScanContext => ({
      sources: [{ source: "Radarr", event: "Download", path: "" }],
      files: [],
      priority: 0,
      attempt: 1,
      signal: new AbortController().signal,
    });

    await built.apiTarget.scan("/data/Movies/Gone", context());
    await built.apiTarget.scan("/data/TV/Show", context());
    // The anchor was never there: Movies keeps its trash, TV (another mount) empties its own.
    expect(fakePlex.emptied).toEqual([tv]);
    const refusals = lines.filter((line) => line.includes(`Skipping emptying trash as anchor '${anchor}' is missing`));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toContain("/data/Movies");

    await writeFile(anchor, "");
    await watch.check();
    await built.apiTarget.scan("/data/Movies/Gone", context());
    expect(fakePlex.emptied).toEqual([tv, movies]);
  });
});

describeFaults("anchors on a hung mount", probeFuse(), {}, () => {
  afterAll(() => cleanupMounts());

  it("count as missing once a look gets no answer in time, and hold the folders under them", async () => {
    const temp = await makeTempDir("autoscan-anchor-hung-");
    cleanup.push(() => temp.cleanup());
    const hung = await mountHungFuse(join(temp.dir, "remote"));
    cleanup.push(async () => {
      hung.release();
      cleanupMounts();
    });
    const logs = captureLog();
    const anchor = join(hung.dir, "Media", ".anchor");
    const watch = createAnchorWatch({
      anchors: [anchor],
      stat: createDiskProbe({ log: logs.log, timeoutMs: 200 }).stat,
      clock: createManualClock(),
      log: logs.log,
    });
    await watch.check();
    expect(watch.guardOf(join(hung.dir, "Media", "TV", "e1.mkv"))).toEqual({ anchor });
    const warnings = logs.records.filter((r) => r.component === "ANCHOR" && r.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ anchor, why: "the disk did not answer" });
    // Looked at again while it still hangs: no second line (the probe answers at once for a mount it knows is hung).
    await watch.check();
    expect(logs.records.filter((r) => r.component === "ANCHOR")).toHaveLength(1);
  });
});
