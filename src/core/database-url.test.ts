import { describe, expect, it } from "vitest";
import { createScrubber } from "../logging/redact.ts";
import { checkDatabaseUrl, databaseUrlSecrets, maskDatabaseUrl } from "./database-url.ts";

describe("a PostgreSQL URL as people see it", () => {
  it.each([
    ["postgres://autoscan:hunter22@db:5432/autoscan", "postgres://autoscan:***@db:5432/autoscan"],
    ["postgresql://autoscan:p%40ss%2Fw@db/autoscan?sslmode=require", "postgresql://autoscan:***@db/autoscan?sslmode=require"],
    ["postgres://autoscan@db/autoscan?password=hunter22&sslmode=require", "postgres://autoscan@db/autoscan?password=***&sslmode=require"],
    ["postgres://autoscan@db/autoscan", "postgres://autoscan@db/autoscan"],
    // Not a URL (an unencoded '/' in the password): masked up to the last '@'.
    ["postgres://autoscan:hun/ter@22@db/autoscan", "postgres://autoscan:***@db/autoscan"],
    // No scheme: read as the scheme "autoscan:", with no host.
    ["autoscan:hunter22@db/autoscan", "***@db/autoscan"],
    ["postgres://autoscan@db:99999/autoscan", "postgres://***@db:99999/autoscan"],
  ])("masks %s as %s", (url, shown) => {
    expect(maskDatabaseUrl(url)).toBe(shown);
  });

  it("names the password, as written and decoded, for the log's scrubber", () => {
    expect(databaseUrlSecrets("postgres://autoscan:p%40ss%2Fword@db/autoscan")).toEqual(["p%40ss%2Fword", "p@ss/word"]);
    expect(databaseUrlSecrets("postgres://autoscan@db/autoscan?password=hunter22")).toEqual(["hunter22"]);
    expect(databaseUrlSecrets("")).toEqual([]);
  });

  it("the scrubber then hides the password in any spelling", () => {
    const scrubber = createScrubber(databaseUrlSecrets("postgres://autoscan:p%40ss%2Fword@db/autoscan"));
    const line = 'connect to postgres://autoscan:p%40ss%2Fword@db/autoscan failed: password "p@ss/word"';
    expect(scrubber.scrub(line)).not.toMatch(/p@ss|p%40ss/);
  });

  it("reads host, port, database and user", () => {
    expect(checkDatabaseUrl("postgres://autoscan:x@db/queue")).toEqual({ ok: true, parts: { host: "db", port: 5432, database: "queue", user: "autoscan" } });
    expect(checkDatabaseUrl("postgresql://u@[::1]:6432/q?host=/run/pg")).toEqual({ ok: true, parts: { host: "/run/pg", port: 6432, database: "q", user: "u" } });
  });
});
