import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TargetAuthError, TargetUnavailableError } from "../src/core/errors.ts";
import { createPlexClient, PlexResponseError } from "../src/targets/plex/client.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";

let plex: FakePlex;

beforeEach(async () => {
  plex = await startFakePlex({
    sections: [
      { key: "1", title: "Movies", type: "movie", locations: ["/data/Movies"] },
      { key: "2", title: "TV", type: "show", locations: ["/data/TV", "/data2/TV"] },
    ],
  });
});
afterEach(() => plex.close());

const client = (overrides: { token?: string; timeoutMs?: number; maxResponseBytes?: number } = {}) =>
  createPlexClient({ url: `${plex.url}/`, token: overrides.token ?? plex.token, ...overrides });

describe("Plex client", () => {
  it("sends the token in a header and asks for JSON, never putting the token in the URL", async () => {
    await client().listSections();
    const request = plex.requests.at(-1);
    expect(request?.headers["x-plex-token"]).toBe(plex.token);
    expect(request?.headers.accept).toBe("application/json");
    expect(request?.rawQuery).not.toContain(plex.token);
  });

  it("reads sections with string keys and every location", async () => {
    expect(await client().listSections()).toEqual([
      { id: "1", title: "Movies", type: "movie", locations: ["/data/Movies"], refreshing: false },
      { id: "2", title: "TV", type: "show", locations: ["/data/TV", "/data2/TV"], refreshing: false },
    ]);
  });

  it("reads the server version", async () => {
    expect((await client().serverInfo()).version).toMatch(/^1\.41\./);
  });

  it("turns a 401 HTML page into TargetAuthError without leaking the token", async () => {
    const error = await client({ token: "wrong-token-abcdef" }).listSections().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TargetAuthError);
    expect((error as Error).message).toContain("Plex rejected the token");
    expect((error as Error).message).not.toContain("wrong-token-abcdef");
  });

  it("scans with GET and form-encodes spaces, parentheses and unicode on the wire", async () => {
    const folder = "/data/Movies/Amélie & Co (2001) [1080p]+x";
    await client().refreshSection("1", folder);
    const scan = plex.scans.at(-1);
    expect(scan?.path).toBe(folder);
    expect(scan?.rawQuery).toBe("path=%2Fdata%2FMovies%2FAm%C3%A9lie+%26+Co+%282001%29+%5B1080p%5D%2Bx");
    expect(plex.requests.at(-1)?.method).toBe("GET");
  });

  it("treats 404 and 5xx as 'Plex unavailable'", async () => {
    await expect(client().refreshSection("99", "/data/Movies/X")).rejects.toBeInstanceOf(TargetUnavailableError);
    plex.setDown(503);
    await expect(client().listSections()).rejects.toBeInstanceOf(TargetUnavailableError);
  });

  it("treats a dropped connection and a refused one as 'Plex unavailable'", async () => {
    plex.setDown("reset");
    await expect(client().listSections()).rejects.toBeInstanceOf(TargetUnavailableError);
    const url = plex.url;
    await plex.close();
    const refused = await createPlexClient({ url, token: "x" })
      .listSections()
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TargetUnavailableError);
    expect((refused as Error).message).toMatch(/unreachable/);
    plex = await startFakePlex();
  });

  it("gives up on a slow Plex after the timeout", async () => {
    plex.setDelay(2_000);
    const error = await client({ timeoutMs: 100 }).listSections().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TargetUnavailableError);
    expect((error as Error).message).toMatch(/did not answer GET \/library\/sections within 0.1 s/);
  });

  it("reports other statuses with the status and a short body excerpt", async () => {
    plex.failNext(/^GET \/library\/sections$/, 400, 1);
    const error = await client().listSections().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlexResponseError);
    expect((error as PlexResponseError).status).toBe(400);
    expect((error as Error).message).toBe("Plex answered 400 to GET /library/sections: 400");
  });

  it("uses PUT for trash and analyze", async () => {
    await client().emptyTrash("2");
    await client().analyzeItem("1234");
    expect(plex.emptied).toEqual(["2"]);
    expect(plex.analyzed).toEqual(["1234"]);
  });

  it("reads activities whose section id is a string, a number or missing", async () => {
    plex.setBusy("1", 1);
    plex.setBusy("2", 1);
    const activities = await client().activities();
    expect(activities.map((a) => a.sectionId).sort()).toEqual(["1", "2"]);
    plex.setBusy("1", 1);
    plex.setActivityContext(false);
    expect((await client().activities())[0]?.sectionId).toBeUndefined();
  });
});

describe("Plex client against a misbehaving server", () => {
  it("refuses a body over the size cap and an answer that is not the expected JSON", async () => {
    const server = createServer((req, res) => {
      if (req.url === "/") {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ MediaContainer: { version: "1", pad: "x".repeat(4096) } }));
      } else res.writeHead(200, { "Content-Type": "application/json" }).end('{"MediaContainer":{"Directory":[{}]}}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const small = createPlexClient({ url, token: "t", maxResponseBytes: 1024 });
      await expect(small.serverInfo()).rejects.toThrow(/over the 1024-byte cap/);
      await expect(createPlexClient({ url, token: "t" }).listSections()).rejects.toThrow(
        /unexpected response shape at MediaContainer.Directory.0.key/,
      );
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe("an error page that quotes the token", () => {
  // The excerpt of an answer is cut at 160 characters: the token must be hidden before the cut, or the part of it
  // before the cut no longer matches the secret and shows in the error (and so in the log, doctor and History).
  const token = "Zq9xW3vT7pL2mK8nR4sY6uB1";
  const pieces = (secret: string): string[] => Array.from({ length: secret.length - 5 }, (_, i) => secret.slice(i, i + 6));

  it.each([
    ["a status page", 400, "text/html"],
    ["a 200 that is not JSON", 200, "text/plain"],
  ])("%s: no piece of the token in the error, even across the cut", async (_label, status, type) => {
    const server = createServer((req, res) => {
      const page = `${"x".repeat(100)} request ${String(req.url)}?X-Plex-Token=${token} was refused`;
      res.writeHead(status, { "Content-Type": type }).end(page);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const error = await createPlexClient({ url, token }).listSections().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PlexResponseError);
      const message = (error as Error).message;
      expect(message).toContain("***");
      for (const piece of pieces(token)) expect(message).not.toContain(piece);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe("the fake Plex keeps the real one's quirks", () => {
  it("answers 404 to PUT and POST on refresh, 401 HTML to a JSON request without a token, XML without Accept", async () => {
    const refresh = `${plex.url}/library/sections/1/refresh?path=%2Fdata%2FMovies`;
    for (const method of ["PUT", "POST"]) {
      const response = await fetch(refresh, { method, headers: { "X-Plex-Token": plex.token } });
      expect(response.status).toBe(404);
    }
    const noToken = await fetch(`${plex.url}/library/sections`, { headers: { Accept: "application/json" } });
    expect(noToken.status).toBe(401);
    expect(noToken.headers.get("content-type")).toBe("text/html");
    expect(await noToken.text()).toContain("<title>Unauthorized</title>");
    const xml = await fetch(`${plex.url}/library/sections?X-Plex-Token=${plex.token}`);
    expect(xml.headers.get("content-type")).toMatch(/^text\/xml/);
    expect(plex.scans).toEqual([]);
  });
});

describe("a large library listing (the file's whole folder)", () => {
  const season = "/data/TV/Big/Season 01";
  const fill = (): void => {
    for (let n = 0; n < 3_000; n++) plex.library.add(`${season}/Big - S01E${String(n).padStart(4, "0")}.mkv`);
    plex.setItemMetadataBytes(2_400);
  };

  it("is read a page at a time: every file, in small answers", async () => {
    fill();
    const files = await client().filesInSection("2", 4, `${season}/Big - S01E0000.mkv`);
    expect(files).toHaveLength(3_000);
    const pages = plex.requests.filter((request) => request.path === "/library/sections/2/all");
    expect(pages.length).toBeGreaterThan(10);
    expect(pages.map((request) => request.query.get("X-Plex-Container-Start"))).toEqual(pages.map((_, i) => String(i * 200)));
  });

  it("a Plex that ignores paging and answers megabytes at once: refused, saying the answer is too large", async () => {
    fill();
    plex.setPaging(false);
    const error = await client().filesInSection("2", 4, `${season}/Big - S01E0000.mkv`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlexResponseError);
    expect(String(error)).toMatch(/GET \/library\/sections\/2\/all: response .*over the 4194304-byte cap/);
  });
});
