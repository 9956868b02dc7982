import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runAuthorize, type AuthorizeResult } from "../src/drive/authorize.ts";
import { createTokenStore } from "../src/drive/token-store.ts";
import { startFakeGoogle, type FakeGoogle } from "./support/fake-google.ts";

/** The authorize flow in-process against the fake Google: every failure a person can meet, with its message. */
const CLIENT_ID = "777-desktop.apps.googleusercontent.com";
const CLIENT_SECRET = "GOCSPX-flow";

let google: FakeGoogle;
let dir: string;

beforeEach(async () => {
  google = await startFakeGoogle();
  google.addClient(CLIENT_ID, CLIENT_SECRET);
  google.addClient("web-client", "web-secret", "web");
  dir = await mkdtemp(join(tmpdir(), "autoscan-flow-"));
});
afterEach(async () => {
  await google.close();
  await rm(dir, { recursive: true, force: true });
});

/** Runs the flow; `answer` gets the printed link and returns what the person pastes. */
async function flow(answer: (link: URL) => Promise<string>, clientId = CLIENT_ID, clientSecret = CLIENT_SECRET): Promise<AuthorizeResult> {
  const input = new PassThrough();
  const lines: string[] = [];
  const log = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line).msg as string) });
  let prompted: () => void = () => undefined;
  const promptSeen = new Promise<void>((resolve) => (prompted = resolve));
  const running = runAuthorize({
    clientId,
    clientSecret,
    scopeNeeds: { sharedDrives: false },
    tokenStore: createTokenStore({ path: join(dir, "google-token.json") }),
    log,
    output: { write: (text: string) => text.includes("Enter authorization code") && prompted() },
    input,
    port: 0,
    endpoints: { tokenUrl: google.tokenUrl, authUrl: google.authUrl },
  });
  await promptSeen;
  const link = lines.map((l) => /^http:\/\/\S+/.exec(l)?.[0]).find(Boolean);
  if (!link) throw new Error(`no link in ${lines.join("\n")}`);
  input.write(`${await answer(new URL(link))}\n`);
  return running;
}

async function redirectOf(link: URL): Promise<string> {
  const answer = await fetch(link, { redirect: "manual" });
  return answer.headers.get("location") ?? `status ${answer.status}: ${await answer.text()}`;
}

describe("authorize flow failures", () => {
  it("succeeds with PKCE: the token endpoint checks the verifier", async () => {
    const result = await flow(redirectOf);
    expect(result).toEqual({ ok: true, path: join(dir, "google-token.json") });
  });

  it.each([
    ["invalid_grant", 400, /invalid_grant.*works once/],
    ["invalid_client", 401, /invalid_client.*CLOUD\.CLIENT_ID and CLOUD\.CLIENT_SECRET/],
    ["redirect_uri_mismatch", 400, /redirect_uri_mismatch.*"Desktop app"/],
    ["unauthorized_client", 401, /unauthorized_client.*"Desktop app"/],
  ])("explains %s", async (reason, status, message) => {
    google.failNext("token", { status, reason });
    const result = await flow(redirectOf);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toMatch(message);
  });

  it("a wrong client secret is invalid_client", async () => {
    const result = await flow(redirectOf, CLIENT_ID, "wrong");
    expect(!result.ok && result.message).toMatch(/^Google does not accept this OAuth client \(invalid_client\)/);
  });

  it("a Web-application client cannot use the loopback redirect", async () => {
    const result = await flow(async (link) => {
      const page = await fetch(link, { redirect: "manual" });
      expect(await page.text()).toContain("redirect_uri_mismatch");
      return "http://127.0.0.1/?error=redirect_uri_mismatch";
    }, "web-client", "web-secret");
    expect(!result.ok && result.message).toMatch(/"Desktop app"/);
  });

  it("a denied consent says so", async () => {
    google.consent = "deny";
    const result = await flow(redirectOf);
    expect(!result.ok && result.message).toMatch(/denied/);
  });

  it("a code pasted a second time is refused: codes are single-use", async () => {
    let used = "";
    const first = await flow(async (link) => {
      used = await redirectOf(link);
      return used;
    });
    expect(first.ok).toBe(true);
    const second = await flow(async () => new URL(used).searchParams.get("code") ?? "");
    expect(!second.ok && second.message).toMatch(/invalid_grant/);
  });
});
