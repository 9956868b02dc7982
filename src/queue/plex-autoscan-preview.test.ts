import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempDir } from "../../test/support/capture-log.ts";
import { damagePlexAutoscanQueue, writePlexAutoscanQueue } from "../../test/support/plex-autoscan-queue.ts";
import { openPlexAutoscanQueue, type PlexAutoscanQueue } from "./plex-autoscan-file.ts";
import { previewPlexAutoscanQueue } from "./plex-autoscan-preview.ts";

let temp: Awaited<ReturnType<typeof makeTempDir>>;
beforeEach(async () => {
  temp = await makeTempDir();
});
afterEach(() => temp.cleanup());

async function open(paths: readonly string[], damage?: "truncate"): Promise<PlexAutoscanQueue> {
  const file = join(temp.dir, "queue.db");
  writePlexAutoscanQueue(file, paths);
  if (damage) damagePlexAutoscanQueue(file, damage);
  const opened = await openPlexAutoscanQueue(file);
  if (opened.kind !== "queue") throw new Error(`not read as plex_autoscan's queue: ${opened.kind}`);
  return opened.queue;
}

describe("previewPlexAutoscanQueue (what import --dry-run lists)", () => {
  it("counts every row and keeps the first paths up to the limit, in the file's order", async () => {
    const source = await open(["/tv/A/Season 01", "relative/b.mkv", "/tv/C/Season 02", "/movies/D (2001)"]);
    try {
      expect(previewPlexAutoscanQueue(source, 2)).toEqual({ requests: 3, distinct: 3, skipped: 1, paths: ["/tv/A/Season 01", "/tv/C/Season 02"], unreadable: [] });
      expect(previewPlexAutoscanQueue(source, Infinity).paths).toEqual(["/tv/A/Season 01", "/tv/C/Season 02", "/movies/D (2001)"]);
    } finally {
      source.close();
    }
  });

  it("a file cut short: the rows that can be read, and the ids that could not", async () => {
    const paths = Array.from({ length: 3000 }, (_, i) => `/tv/Show ${String(i)}/Season 01`);
    const source = await open(paths, "truncate");
    try {
      const preview = previewPlexAutoscanQueue(source, 20);
      expect(preview.requests).toBeGreaterThan(0);
      expect(preview.requests).toBeLessThan(paths.length);
      expect(preview.unreadable.length).toBeGreaterThan(0);
      expect(preview.paths).toHaveLength(20);
    } finally {
      source.close();
    }
  });
});
