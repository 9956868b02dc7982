import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LogFormat, Logger } from "../core/logger.ts";
import { makeTempDir } from "../../test/support/capture-log.ts";
import { createLogger } from "./create-logger.ts";
import { createScrubber, REDACTED } from "./redact.ts";

// Secrets from the config (known at start) …
const PLEX_TOKEN = "plexTok3nSecretValue";
const SERVER_PASS = "9c4b81fe234e4d6eb9011cefe514d915";
const CLIENT_SECRET = "GOCSPX-cl1entSecretValue";
const AUTH_PASSWORD = "basicAuthPassw0rd";
// … and OAuth tokens learned at run time (the drive module registers them with scrubber.add).
const ACCESS_TOKEN = "ya29.a0AfH6SMBaccessTokenValue";
const REFRESH_TOKEN = "1//0gRefreshTokenValue-xyz";
const ALL = [PLEX_TOKEN, SERVER_PASS, CLIENT_SECRET, AUTH_PASSWORD, ACCESS_TOKEN, REFRESH_TOKEN];

const basic = (user: string, password: string): string => Buffer.from(`${user}:${password}`).toString("base64");

/** Every way a secret could reach a log line that we can think of: messages, URLs, headers, bodies, errors, nesting. */
function logEverything(log: Logger): number {
  const plex = log.child({ component: "PLEX" });
  const web = log.child({ component: "WEB" });
  const drive = log.child({ component: "DRIVE" });
  log.info(`Started server: http://0.0.0.0:3467/${SERVER_PASS}`);
  web.info({ url: `http://127.0.0.1:3467/api/${SERVER_PASS}?cmd=queue_count` }, "Client GET API call from '127.0.0.1'");
  web.info({ path: `/${SERVER_PASS}` }, "Client '127.0.0.1' scan request for movie");
  web.debug({ req: { headers: { authorization: `Basic ${basic("autoscan", AUTH_PASSWORD)}` } } }, "manual trigger");
  plex.debug({ url: `http://plex:32400/library/sections?X-Plex-Token=${PLEX_TOKEN}` }, "GET");
  plex.debug({ headers: { "X-Plex-Token": PLEX_TOKEN, Accept: "application/json" } }, "request headers");
  plex.debug({ token: PLEX_TOKEN, plexToken: PLEX_TOKEN }, "token fields");
  plex.error(
    { err: new Error(`GET http://plex:32400/library/sections/1/refresh?path=%2Fdata&X-Plex-Token=${PLEX_TOKEN} failed: 401`) },
    "Scan failed",
  );
  plex.warn(`Plex rejected the token ${PLEX_TOKEN}`);
  drive.info({ google: { oauth: { client: { client_id: "abc.apps", client_secret: CLIENT_SECRET } } } }, "nested client");
  drive.debug({ clientSecret: CLIENT_SECRET }, "client secret field");
  drive.debug({ request: { headers: { Authorization: `Bearer ${ACCESS_TOKEN}` } } }, "Drive call");
  drive.debug({ response: { data: { access_token: ACCESS_TOKEN, refresh_token: REFRESH_TOKEN, expires_in: 3599 } } }, "token response");
  drive.info({ stored: { token: { accessToken: ACCESS_TOKEN, refreshToken: REFRESH_TOKEN } } }, "Token refreshed");
  drive.debug({ saved: { refreshToken: REFRESH_TOKEN, accessToken: ACCESS_TOKEN, expiryDate: 1 } }, "Saved the token");
  drive.error(
    { err: new Error(`POST https://oauth2.googleapis.com/token grant_type=refresh_token&client_secret=${CLIENT_SECRET}&refresh_token=${REFRESH_TOKEN}: invalid_grant`) },
    "Token refresh failed",
  );
  drive.error({ err: new Error("Drive request failed", { cause: new Error(`Bearer ${ACCESS_TOKEN} expired`) }) }, "Poll failed");
  log.debug({ config: { PLEX_TOKEN, SERVER_PASS, CLOUD: { CLIENT_SECRET } } }, "config");
  return 18;
}

describe.each<LogFormat>(["classic", "json"])("secrets never appear in %s logs", (format) => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir("autoscan-redact-")));
  afterEach(() => cleanup());

  async function run(secrets: readonly string[], runtime: readonly string[]) {
    let out = "";
    const path = join(dir, "autoscan.log");
    const handle = createLogger({
      level: "debug",
      format,
      stream: { write: (line: string) => (out += line) },
      file: { path, maxBytes: 10_000_000, maxFiles: 1 },
      secrets,
    });
    for (const secret of runtime) handle.scrubber.add(secret);
    const events = logEverything(handle.log);
    await handle.settle();
    handle.close();
    return { out, file: readFileSync(path, "utf8"), events };
  }

  it("on the console and in the log file, with the config's secrets and the run-time tokens registered", async () => {
    const { out, file, events } = await run([PLEX_TOKEN, SERVER_PASS, CLIENT_SECRET, AUTH_PASSWORD], [ACCESS_TOKEN, REFRESH_TOKEN]);
    // Not vacuous: every event was written, with the secret's place marked.
    expect(out.match(/Started server: http:\/\/0\.0\.0\.0:3467\/<redacted>/g)).toHaveLength(1);
    if (format === "json") expect(out.trimEnd().split("\n")).toHaveLength(events);
    for (const secret of ALL) {
      expect(out, `console: ${secret}`).not.toContain(secret);
      expect(file, `file: ${secret}`).not.toContain(secret);
    }
  });

  it("by field name and pattern alone, before any secret is registered (a token logged by mistake)", async () => {
    const { out, file } = await run([], []);
    // SERVER_PASS in a URL path, a token in plain prose and the config's own keys can only be caught by value (and
    // are registered at start); everything else must be caught by its field name or its shape.
    const byValueOnly = ["Started server", "Client", "rejected the token", "]: config", '"msg":"config"'];
    const keep = (text: string): string =>
      text.split("\n").filter((line) => !byValueOnly.some((marker) => line.includes(marker))).join("\n");
    for (const secret of [PLEX_TOKEN, CLIENT_SECRET, ACCESS_TOKEN, REFRESH_TOKEN]) {
      expect(keep(out), `console: ${secret}`).not.toContain(secret);
      expect(keep(file), `file: ${secret}`).not.toContain(secret);
    }
    expect(out).not.toContain(basic("autoscan", AUTH_PASSWORD));
  });

  it("even when a secret has characters JSON escapes (a quote, a backslash)", async () => {
    const odd = 'pa"ss\\w0rd!';
    let out = "";
    const handle = createLogger({ level: "debug", format, stream: { write: (line: string) => (out += line) }, secrets: [odd] });
    handle.log.info({ password2: odd }, `login with ${odd}`);
    handle.close();
    expect(out).not.toContain(odd);
    expect(out).not.toContain(JSON.stringify(odd).slice(1, -1));
  });
});

describe("createScrubber", () => {
  it("replaces every occurrence of a secret, and its URL-encoded form", async () => {
    const scrub = createScrubber(["s3cret/with space"]);
    expect(scrub.scrub("a s3cret/with space b s3cret%2Fwith%20space c")).toBe(`a ${REDACTED} b ${REDACTED} c`);
  });

  it("ignores an empty value (an empty PLEX_TOKEN must not blank every line)", async () => {
    const scrub = createScrubber(["", undefined]);
    expect(scrub.scrub("abc def")).toBe("abc def");
  });

  it("censors a short secret wherever it stands alone, in every spelling, and leaves words that hold it", async () => {
    const scrub = createScrubber(["abc", "p-1"]);
    expect(scrub.scrub("POST /abc/sonarr from abcdef; /api/%61bc?cmd=queue; labc; p-1 p-12")).toBe(
      `POST /${REDACTED}/sonarr from abcdef; /api/${REDACTED}?cmd=queue; labc; ${REDACTED} p-12`,
    );
  });

  it("censors a short secret after a percent-escape too (`%2Fabc`: the F is the escape's, not a letter touching it)", () => {
    const scrub = createScrubber(["k3yz"]);
    expect(scrub.scrub("path=%2Fnotify%2Fk3yz; /notify/k3yz%3F; k3yzz")).toBe(`path=%2Fnotify%2F${REDACTED}; /notify/${REDACTED}%3F; k3yzz`);
  });

  it("learns secrets added later", async () => {
    const scrub = createScrubber();
    expect(scrub.scrub("token ya29.later-token")).toBe("token ya29.later-token");
    scrub.add("ya29.later-token");
    expect(scrub.scrub("token ya29.later-token")).toBe(`token ${REDACTED}`);
  });

  it.each([
    ["?X-Plex-Token=abc123def", `?X-Plex-Token=${REDACTED}`],
    ["&x-plex-token=abc123def&b=1", `&x-plex-token=${REDACTED}&b=1`],
    ["?code=4/0AX4XfWh&scope=drive", `?code=${REDACTED}&scope=drive`],
    ['{"refresh_token":"1//0abc"}', `{"refresh_token":"${REDACTED}"}`],
    ["Authorization: Bearer abcdefgh12345", `Authorization: Bearer ${REDACTED}`],
  ])("scrubs %s by its shape", (text, expected) => {
    expect(createScrubber().scrub(text)).toBe(expected);
  });
});
