import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PROMPT, runAuthorize, type AuthorizeResult } from "../src/drive/authorize.ts";
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

interface Started {
  readonly link: URL;
  readonly input: PassThrough;
  /** Everything written to the person so far. */
  text(): string;
  /** Resolves once `count` prompts have been written. */
  prompts(count: number): Promise<void>;
  readonly running: Promise<AuthorizeResult>;
}

/** Starts the flow and waits for the first prompt. */
async function start(
  options: { clientId?: string; clientSecret?: string; loopbackHint?: boolean; signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<Started> {
  const input = new PassThrough();
  let text = "";
  const waiters: { count: number; resolve: () => void }[] = [];
  const promptCount = (): number => text.split(PROMPT).length - 1;
  const running = runAuthorize({
    clientId: options.clientId ?? CLIENT_ID,
    clientSecret: options.clientSecret ?? CLIENT_SECRET,
    scopeNeeds: { sharedDrives: false },
    tokenStore: createTokenStore({ path: join(dir, "google-token.json") }),
    output: {
      write: (chunk: string) => {
        text += chunk;
        for (const waiter of waiters.filter((w) => promptCount() >= w.count)) waiter.resolve();
      },
    },
    input,
    port: 0,
    endpoints: { tokenUrl: google.tokenUrl, authUrl: google.authUrl },
    ...(options.loopbackHint === undefined ? {} : { loopbackHint: options.loopbackHint }),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  });
  const prompts = (count: number): Promise<void> =>
    promptCount() >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve }));
  await prompts(1);
  const link = /^ {2}(http:\/\/\S+)$/m.exec(text)?.[1];
  if (!link) throw new Error(`no link in ${text}`);
  return { link: new URL(link), input, text: () => text, prompts, running };
}

/** Runs the flow; `answer` gets the printed link and returns what the person pastes. */
async function flow(answer: (link: URL) => Promise<string>, clientId = CLIENT_ID, clientSecret = CLIENT_SECRET): Promise<AuthorizeResult> {
  const started = await start({ clientId, clientSecret });
  started.input.write(`${await answer(started.link)}\n`);
  return started.running;
}

function messageOf(result: AuthorizeResult): string | false {
  return "message" in result && result.message;
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
    expect(messageOf(result)).toMatch(message);
  });

  it("a wrong client secret is invalid_client", async () => {
    const result = await flow(redirectOf, CLIENT_ID, "wrong");
    expect(messageOf(result)).toMatch(/^Google does not accept this OAuth client \(invalid_client\)/);
  });

  it("a Web-application client cannot use the loopback redirect", async () => {
    const result = await flow(async (link) => {
      const page = await fetch(link, { redirect: "manual" });
      expect(await page.text()).toContain("redirect_uri_mismatch");
      return "http://127.0.0.1/?error=redirect_uri_mismatch";
    }, "web-client", "web-secret");
    expect(messageOf(result)).toMatch(/"Desktop app"/);
  });

  it("a denied consent says so", async () => {
    google.consent = "deny";
    const result = await flow(redirectOf);
    expect(messageOf(result)).toMatch(/denied/);
  });

  it("a code pasted a second time is refused: codes are single-use", async () => {
    let used = "";
    const first = await flow(async (link) => {
      used = await redirectOf(link);
      return used;
    });
    expect(first.ok).toBe(true);
    const second = await flow(async () => new URL(used).searchParams.get("code") ?? "");
    expect(messageOf(second)).toMatch(/invalid_grant/);
  });
});

describe("what the person sees and types", () => {
  it("plain instructions, then the prompt; the loopback hint only where a browser can reach the port", async () => {
    const outside = await start();
    expect(outside.text()).toMatch(/^Open this link in a browser and allow access:\n\n {2}http:\/\/127\.0\.0\.1:\d+\/o\/oauth2/);
    expect(outside.text()).toMatch(/ssh -L (\d+):127\.0\.0\.1:\1 /);
    expect(outside.text().endsWith(`\n\n${PROMPT}`)).toBe(true);
    outside.input.end();
    const inContainer = await start({ loopbackHint: false });
    expect(inContainer.text()).not.toContain("ssh -L");
    expect(inContainer.text()).toContain("paste it here");
    inContainer.input.end();
    expect(await outside.running).toEqual({ ok: false, message: "No authorization code was entered." });
    expect(await inContainer.running).toEqual({ ok: false, message: "No authorization code was entered." });
  });

  it("refuses a line that is neither a code nor the redirect address without asking Google, and asks again", async () => {
    const started = await start();
    google.resetCalls();
    for (const junk of ["yes", "GOCSPX-flow", started.link.href]) {
      started.input.write(`${junk}\n`);
      await started.prompts(2 + ["yes", "GOCSPX-flow", started.link.href].indexOf(junk));
    }
    expect(started.text()).toContain("neither an authorization code");
    expect(started.text()).toContain("no code= parameter");
    expect(google.calls.token).toBe(0);
    started.input.write(`${await redirectOf(started.link)}\n`);
    expect((await started.running).ok).toBe(true);
    expect(google.calls.token).toBe(1);
  });

  it("Ctrl-C at the prompt: interrupted, the prompt's line ended, nothing else said", async () => {
    const controller = new AbortController();
    const started = await start({ signal: controller.signal });
    const before = started.text();
    controller.abort("SIGINT");
    expect(await started.running).toEqual({ ok: false, interrupted: true });
    expect(started.text()).toBe(`${before}\n`);
  });
});

describe("a Google that stops answering", () => {
  it("the code exchange is one try, bounded by the timeout, and says what could not be reached", async () => {
    const started = await start({ timeoutMs: 300 });
    const answer = await redirectOf(started.link);
    google.resetCalls();
    google.silent = true;
    const began = Date.now();
    started.input.write(`${answer}\n`);
    const result = await started.running;
    expect(Date.now() - began).toBeLessThan(2_000);
    expect(google.held).toBe(1);
    expect(messageOf(result)).toBe(
      `Cannot reach Google at ${new URL(google.tokenUrl).host}: no answer within 0.3 s. Check DNS and network access from where this command runs (in Docker: inside the autoscan container, whose DNS and network are not the host's), and the proxy if this network needs one (HTTPS_PROXY).`,
    );
    expect(started.text()).not.toContain("Retrieved first access token!");
  });

  it("a refused connection is named as such, before the link is shown", async () => {
    const port = google.url.replace(/^.*:(\d+)\/$/, "$1");
    await google.close();
    const text: string[] = [];
    const result = await runAuthorize({
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      scopeNeeds: { sharedDrives: false },
      tokenStore: createTokenStore({ path: join(dir, "google-token.json") }),
      output: { write: (chunk: string) => text.push(chunk) },
      input: new PassThrough(),
      port: 0,
      endpoints: { tokenUrl: `http://127.0.0.1:${port}/token`, authUrl: `http://127.0.0.1:${port}/o/oauth2/v2/auth` },
    });
    expect(messageOf(result)).toMatch(new RegExp(`^Cannot reach Google at 127\\.0\\.0\\.1:${port}: the connection was refused \\(ECONNREFUSED\\)\\. Check DNS`));
    expect(text).toEqual([]);
    google = await startFakeGoogle();
  });
});
