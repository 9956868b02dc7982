import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTokenStore, isTooOpen } from "./token-store.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "token-store-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("token store", () => {
  it("saves with mode 0600 and loads back", async () => {
    const store = createTokenStore({ path: join(dir, "sub", "google-token.json") });
    expect(await store.load()).toBeUndefined();
    await store.save({ clientId: "c", refreshToken: "r", accessToken: "a", expiryDate: 5, scope: "s", tokenType: "Bearer" });
    expect((await stat(store.path)).mode & 0o777).toBe(0o600);
    expect(await isTooOpen(store.path)).toBe(false);
    expect(await store.load()).toEqual({ clientId: "c", refreshToken: "r", accessToken: "a", expiryDate: 5, scope: "s", tokenType: "Bearer" });
  });

  it("a malformed file is a clear ConfigError naming the fix", async () => {
    const path = join(dir, "google-token.json");
    await writeFile(path, JSON.stringify({ version: 1, client_id: "c" }));
    await expect(createTokenStore({ path }).load()).rejects.toThrow(/malformed \(refresh_token\).*autoscan authorize/);
    await writeFile(path, "{");
    await expect(createTokenStore({ path }).load()).rejects.toThrow(/not valid JSON/);
  });
});
