import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../src/core/clock.ts";
import type { Target } from "../src/core/target.ts";
import { createEmbyTarget } from "../src/targets/emby/emby-target.ts";
import { createJellyfinTarget } from "../src/targets/jellyfin/jellyfin-target.ts";
import { captureLog } from "./support/capture-log.ts";
import { startFakeEmby } from "./support/fake-emby.ts";
import { startFakeJellyfin } from "./support/fake-jellyfin.ts";

/**
 * Refresh in place on Jellyfin and Emby through the real targets against fakes that answer as the sources say
 * (refresh-fastpath-targets.md §2, §3): the item found by the landed check's walk, then `POST /Items/{id}/Refresh` for it
 * alone, both modes explicit (Jellyfin's API defaults them to None), no `Recursive` on Jellyfin (it has none), `false`
 * on Emby; Jellyfin 12 takes the MediaBrowser header only. Never a library refresh.
 */
const LIBRARIES = [{ name: "Shows", locations: ["/data/tv"] }];
const SEASON = "/data/tv/Show (2020)/Season 01";
const E1 = `${SEASON}/Show - S01E01.mkv`;
const E2 = `${SEASON}/Show - S01E02.mkv`;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const signal = (): AbortSignal => new AbortController().signal;
const refresherOf = (target: Target) => {
  if (!target.refresher) throw new Error(`${target.name} has no refresher`);
  return target.refresher;
};

describe("refresh in place on Jellyfin and Emby", () => {
  it("Jellyfin 12: the named file's item only, both modes explicit, no Recursive, the MediaBrowser header", async () => {
    const fake = await startFakeJellyfin({ version: "12", libraries: LIBRARIES });
    cleanups.push(() => fake.close());
    fake.library.add(E1);
    fake.library.add(E2);
    const target = createJellyfinTarget({ name: "jellyfin", url: fake.url, token: fake.key, clock: systemClock, log: captureLog().log });

    const outcome = await refresherOf(target).refresh([E1], "file", signal());

    expect(fake.itemRefreshes).toEqual([
      {
        itemId: expect.stringMatching(/^[0-9a-f]{32}$/),
        path: E1,
        query: { MetadataRefreshMode: "FullRefresh", ImageRefreshMode: "Default", ReplaceAllMetadata: "false", ReplaceAllImages: "false" },
      },
    ]);
    expect(outcome).toEqual({ refreshed: 1, missing: [], detail: `item ${fake.itemRefreshes[0]?.itemId ?? ""} re-read (metadata FullRefresh, images Default)` });
    expect(fake.fullRefreshes).toBe(0);
    expect(fake.requests.every((r) => String(r.headers.authorization ?? "").startsWith("MediaBrowser Token="))).toBe(true);
  });

  it("Emby: Recursive=false, answered 200; a file the library does not hold is reported, nothing sent for it", async () => {
    const fake = await startFakeEmby({ libraries: LIBRARIES });
    cleanups.push(() => fake.close());
    fake.library.add(E1);
    const target = createEmbyTarget({ name: "emby", url: fake.url, token: fake.key, clock: systemClock, log: captureLog().log });

    const outcome = await refresherOf(target).refresh([E1, E2], "metadata", signal());

    expect(fake.itemRefreshes).toEqual([
      { itemId: expect.any(String), path: E1, query: expect.objectContaining({ MetadataRefreshMode: "FullRefresh", ImageRefreshMode: "Default", Recursive: "false" }) },
    ]);
    expect(outcome.refreshed).toBe(1);
    expect(outcome.missing).toEqual([E2]);
    expect(outcome.detail).toContain(`no item for '${E2}'`);
  });
});
