import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../src/core/clock.ts";
import { createPlexClient } from "../src/targets/plex/client.ts";
import { createSectionResolver } from "../src/targets/plex/sections.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";

/**
 * The section-list cache shares one listing between the callers that ask at the same time. The listing is the cache's
 * own: a caller that stops waiting (its budget spent) must not cut it short for the others. Real HTTP to the fake Plex,
 * which answers slowly.
 */
const log = pino({ level: "silent" });
let plex: FakePlex | undefined;

afterEach(async () => {
  await plex?.close();
  plex = undefined;
});

describe("the shared section listing", () => {
  it("a caller whose short budget runs out gives up alone: the second caller still gets the list", async () => {
    plex = await startFakePlex({ sections: [{ key: "1", title: "Movies", type: "movie", locations: ["/data/Movies"] }] });
    plex.setDelay(1_500);
    const client = createPlexClient({ url: plex.url, token: plex.token, timeoutMs: 30_000 });
    const sections = createSectionResolver({ client, clock: systemClock, log });

    const hurried = sections.resolve("/data/Movies/Heat (1995)", AbortSignal.timeout(200));
    const patient = sections.resolve("/data/Movies/Heat (1995)", AbortSignal.timeout(20_000));

    await expect(hurried).rejects.toThrow();
    expect((await patient).map((section) => section.id)).toEqual(["1"]);
    // One listing served both: the one that gave up did not start a second.
    expect(plex.requests.filter((request) => request.path === "/library/sections")).toHaveLength(1);
  });
});
