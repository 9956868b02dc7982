import { describe, expect, it } from "vitest";
import { TEST_PASS, buildWebApp } from "./support/web-builders.ts";

/**
 * Each way a manual request asks for a refresh in place, through the real app (in process) to the sink: what reaches
 * the queue carries the wish; a value it does not know is refused before anything is stored.
 */
const file = "/tv/Show/Season 01/Show - S01E01.mkv";
const server = "/data/TV/Show/Season 01/Show - S01E01.mkv";

describe("asking for a refresh in place", () => {
  it.each([
    ["the trigger, refresh=1", () => [`/${TEST_PASS}/triggers/manual?path=${encodeURIComponent(file)}&refresh=1`, { method: "POST" }] as const, "file"],
    ["the trigger, refresh=metadata", () => [`/${TEST_PASS}/triggers/manual?path=${encodeURIComponent(file)}&refresh=metadata`, { method: "GET" }] as const, "metadata"],
    [
      "the form post (curl -d)",
      () => [`/${TEST_PASS}`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ eventType: "Manual", filepath: file, refresh: "1" }).toString() }] as const,
      "file",
    ],
    [
      "JSON (Tdarr's Web Request)",
      () => [`/${TEST_PASS}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ eventType: "Manual", filepath: file, refresh: 1 }) }] as const,
      "file",
    ],
  ])("%s", async (_name, request, wish) => {
    const { app, recorder } = buildWebApp();
    const [path, init] = request();
    const answer = await app.request(path, init);
    expect(answer.status).toBe(200);
    expect(recorder.all()).toEqual([expect.objectContaining({ path: server, refresh: wish })]);
  });

  it("a plain manual request asks no refresh", async () => {
    const { app, recorder } = buildWebApp();
    await app.request(`/${TEST_PASS}/triggers/manual?path=${encodeURIComponent(file)}`, { method: "POST" });
    expect(recorder.all()).toHaveLength(1);
    expect(recorder.all()[0]).not.toHaveProperty("refresh");
  });

  it("an unknown value is refused with what is accepted, and nothing is stored", async () => {
    const { app, recorder } = buildWebApp();
    const form = await app.request(`/${TEST_PASS}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ eventType: "Manual", filepath: file, refresh: "yes please" }).toString(),
    });
    expect(form.status).toBe(400);
    expect(await form.text()).toContain("'refresh' must be 1 (re-read the file: metadata and streams), metadata, or 0; got 'yes please'");
    expect(recorder.all()).toEqual([]);
  });
});
