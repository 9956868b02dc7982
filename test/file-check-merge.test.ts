import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ScanRequest } from "../src/core/scan.ts";
import { createDiskProbe } from "../src/paths/disk-probe.ts";
import { createKindResolver } from "../src/queue/resolve-kind.ts";
import { captureLog } from "./support/capture-log.ts";
import { createFakeTarget, type FakeTarget } from "./support/fake-target.ts";
import { createQueueHarness, fileRequest, SCAN_DELAY_MS, type QueueHarness } from "./support/queue-harness.ts";

/**
 * Merging by folder through the real queue (sql.js file, journal) and the real dispatcher, with real files: kinds are
 * looked up on disk before a request is merged (never guessed into a wider scan), and two Unicode spellings of one
 * folder wait as one item, scanned once, spelled as on disk.
 */
const NFC = "Pok\u00e9mon";
const NFD = "Poke\u0301mon";
const manual = (path: string): ScanRequest => ({ path, kind: "unknown", source: "Manual", event: "Manual" });

let harness: QueueHarness | undefined;
afterEach(async () => harness?.close());

async function setup(target: FakeTarget, withResolver = true): Promise<QueueHarness> {
  // The harness keeps server paths under <dir>/media; the resolver looks there too, through the shared probe.
  let media = "";
  const probe = createDiskProbe({ log: captureLog().log });
  const resolveKind = createKindResolver({
    localForms: (path) => [join(media, path)],
    statPath: probe.stat,
    log: captureLog().log,
  });
  harness = await createQueueHarness({
    targets: [target],
    queue: withResolver ? { resolveKind } : {},
    dispatcher: { statPath: probe.stat },
  });
  media = join(harness.dir, "media");
  return harness;
}

describe("kinds are looked up, not guessed into a wider scan", () => {
  it("keeps two unknown folders named like files apart, each scanned as itself", async () => {
    const plex = createFakeTarget();
    const h = await setup(plex);
    await h.touch("/movies/The.Matrix.1999.1080p/");
    await h.touch("/movies/Heat.1995.1080p/");
    await h.enqueue(manual("/movies/The.Matrix.1999.1080p"), manual("/movies/Heat.1995.1080p"));
    expect((await h.queue.listPending()).map((item) => item.folder).sort()).toEqual([
      "/movies/Heat.1995.1080p",
      "/movies/The.Matrix.1999.1080p",
    ]);
    await h.advance(SCAN_DELAY_MS);
    expect(plex.folders().sort()).toEqual(["/movies/Heat.1995.1080p", "/movies/The.Matrix.1999.1080p"]);
  });

  it("merges unknown paths that are files on disk into their folder, extension or not", async () => {
    const plex = createFakeTarget();
    const h = await setup(plex);
    await h.touch("/movies/Heat (1995)/Heat (1995).mkv");
    await h.touch("/movies/Heat (1995)/Heat (1995).en.forced.subtitles");
    await h.enqueue(manual("/movies/Heat (1995)/Heat (1995).mkv"), manual("/movies/Heat (1995)/Heat (1995).en.forced.subtitles"));
    // Looked up once stored and answered: in the background, within moments.
    for (let i = 0; i < 100 && (await h.queue.listPending()).length !== 1; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await h.queue.listPending()).map((item) => item.folder)).toEqual(["/movies/Heat (1995)"]);
    await h.advance(SCAN_DELAY_MS);
    expect(plex.folders()).toEqual(["/movies/Heat (1995)"]);
  });

  it("without a resolver, or with nothing on disk yet, scans the path as given and never its parent", async () => {
    const plex = createFakeTarget();
    const h = await setup(plex, false);
    await h.enqueue(manual("/movies/The.Matrix.1999.1080p"), manual("/movies/Heat.1995.1080p"));
    expect((await h.queue.listPending()).map((item) => item.folder).sort()).toEqual([
      "/movies/Heat.1995.1080p",
      "/movies/The.Matrix.1999.1080p",
    ]);
    await h.touch("/movies/The.Matrix.1999.1080p/");
    await h.touch("/movies/Heat.1995.1080p/");
    await h.advance(SCAN_DELAY_MS);
    expect(plex.folders().sort()).toEqual(["/movies/Heat.1995.1080p", "/movies/The.Matrix.1999.1080p"]);
  });
});

describe("two spellings of one folder", () => {
  it("wait as one item (keyed in NFC) and are scanned once, spelled as on disk", async () => {
    const plex = createFakeTarget();
    const h = await setup(plex);
    await h.touch(`/tv/${NFD}/Season 01/e01.mkv`);
    await h.touch(`/tv/${NFD}/Season 01/e02.mkv`);
    await h.enqueue(fileRequest(`/tv/${NFC}/Season 01/e01.mkv`, "Sonarr"));
    await h.enqueue(fileRequest(`/tv/${NFD}/Season 01/e02.mkv`, "Sonarr (mac)"));
    const pending = await h.queue.listPending();
    expect(pending).toHaveLength(1);
    expect(pending[0]?.folder).toBe(`/tv/${NFC}/Season 01`);
    await h.advance(SCAN_DELAY_MS);
    expect(plex.folders()).toEqual([`/tv/${NFD}/Season 01`]);
    expect(plex.calls[0]?.context.files).toEqual([`/tv/${NFD}/Season 01/e01.mkv`, `/tv/${NFD}/Season 01/e02.mkv`]);
  });

  it("keep the first received bytes for a folder nothing on disk spells (deletions)", async () => {
    const plex = createFakeTarget();
    const h = await setup(plex);
    const deleted = { deleted: true, event: "EpisodeFileDelete" };
    await h.enqueue(fileRequest(`/tv/${NFD}/Season 01/e01.mkv`, "Sonarr", deleted));
    await h.enqueue(fileRequest(`/tv/${NFC}/Season 01/e02.mkv`, "Sonarr", deleted));
    expect(await h.queue.listPending()).toHaveLength(1);
    await h.advance(SCAN_DELAY_MS);
    expect(plex.folders()).toEqual([`/tv/${NFD}/Season 01`]);
  });
});
