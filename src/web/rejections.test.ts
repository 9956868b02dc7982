// @module-tag realtime
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { captureLog } from "../../test/support/capture-log.ts";
import { systemClock } from "../core/clock.ts";
import { createGuessBrake } from "./guess-brake.ts";
import { createRejectionLog } from "./rejections.ts";
import { buildWebApp } from "../../test/support/web-builders.ts";

describe("refused requests are summarised per client", () => {
  it("tells a client's first refusal at once and the next thousands in one line per interval", async () => {
    const { log, records } = captureLog("info");
    const rejections = createRejectionLog({ log, intervalMs: 50 });
    for (let i = 0; i < 5_000; i++) rejections.refuse("10.0.0.9", i % 2 ? "wrong secret" : "wrong credentials", "wrong secret in the URL");
    rejections.refuse("10.0.0.8", "wrong secret", "wrong secret in the URL");
    expect(records).toHaveLength(2);
    expect(records[0]?.msg).toBe("Refused client '10.0.0.9': wrong secret in the URL. Further refusals from it are summarised every 0 s.");
    await sleep(120);
    const summaries = records.slice(2);
    expect(summaries).toHaveLength(1);
    expect(summaries[0]?.msg).toMatch(/^Client '10\.0\.0\.9' was refused 4999 more time\(s\) in the last 0 s \(wrong secret: 2500, wrong credentials: 2499\)\.$/);
    // Quiet for an interval: the next refusal is told at once again.
    await sleep(120);
    rejections.refuse("10.0.0.9", "wrong secret", "wrong secret in the URL");
    expect(records.at(-1)?.msg).toMatch(/^Refused client '10\.0\.0\.9'/);
    rejections.close();
  });

  it("keeps memory bounded: past the tracked clients, refusals are only counted", () => {
    const { log, records } = captureLog("info");
    const rejections = createRejectionLog({ log, intervalMs: 60_000, maxClients: 3 });
    for (let i = 0; i < 1_000; i++) rejections.refuse(`10.1.${i >> 8}.${i & 255}`, "wrong secret", "wrong secret in the URL");
    expect(records).toHaveLength(3);
    rejections.close();
    expect(records.at(-1)?.msg).toBe("997 more request(s) from other clients were refused in the last 60 s.");
  });

  it("a storm of wrong secrets through the real app writes a handful of lines, never the attempted secret", async () => {
    const { log, records } = captureLog("info");
    const rejections = createRejectionLog({ log, intervalMs: 60_000 });
    // (Unbraked: the brake's own pace is guess-brake.test.ts's and web-guessing.test.ts's.)
    const { app } = buildWebApp({ log, rejections, guesses: createGuessBrake({ clock: systemClock, free: Number.POSITIVE_INFINITY }) });
    for (let i = 0; i < 2_000; i++) {
      const res = await app.request(`/guess-${i}/sonarr`, { method: "POST", body: "{}" });
      expect(res.status).toBe(404);
    }
    await app.request("/favicon.ico");
    rejections.close();
    const lines = records.map((r) => r.msg);
    expect(lines.length).toBeLessThanOrEqual(3);
    expect(lines.join("\n")).not.toContain("guess-");
    expect(lines.at(-1)).toMatch(/was refused 1999 more time\(s\)/);
  });
});
