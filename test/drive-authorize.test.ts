import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeGoogle, type FakeGoogle } from "./support/fake-google.ts";
import { childEnv, CLI_MAIN, within } from "./support/run-cli.ts";

/**
 * `autoscan authorize` driven as a person would in a terminal (a pty-less child): wait for the prompt, open the
 * printed link in a "browser" (the fake's consent page answers with a redirect to 127.0.0.1), then paste what the
 * address bar shows. Google is the fake, reached through the real google-auth-library.
 */
const CLIENT_ID = "555-desktop.apps.googleusercontent.com";
const CLIENT_SECRET = "GOCSPX-terminal-test";
/** The whole line a Ctrl-C leaves (after ending the prompt's line when one was open). */
const INTERRUPTED = "autoscan authorize: interrupted, nothing was saved.\n";

let google: FakeGoogle;
let dir: string;
let child: ChildProcessWithoutNullStreams | undefined;

beforeEach(async () => {
  google = await startFakeGoogle();
  google.addClient(CLIENT_ID, CLIENT_SECRET);
  dir = await mkdtemp(join(tmpdir(), "autoscan-authorize-"));
});

afterEach(async () => {
  child?.kill();
  child = undefined;
  await google.close();
  await rm(dir, { recursive: true, force: true });
});

interface Session {
  /** Resolves with everything written to stderr once `text` appears in it. */
  waitFor(text: string | RegExp): Promise<string>;
  type(line: string): void;
  exit: Promise<{ code: number | null; stderr: string; stdout: string; ms: number }>;
}

interface SessionOptions {
  /** Point the command at the fake Google (default); false leaves Google's real addresses. */
  readonly fakeGoogle?: boolean;
  readonly nodeArgs?: readonly string[];
}

/** `autoscan authorize` as a child with its input on a pipe (a person typing); `ms` is how long it ran. */
async function startAuthorize(cloud: Record<string, unknown>, options: SessionOptions = {}): Promise<Session> {
  const config = join(dir, "config.json");
  const base = { ENABLED: true, CLIENT_ID, CLIENT_SECRET, ALLOWED: { FILE_PATHS: ["My Drive/Media/"] } };
  await writeFile(config, JSON.stringify({ SERVER_PASS: "0123456789abcdef0123456789abcdef", CLOUD: { ...base, ...cloud } }));
  const endpoints: Record<string, string> = options.fakeGoogle === false ? {} : { AUTOSCAN_GOOGLE_TOKEN_URL: google.tokenUrl, AUTOSCAN_GOOGLE_AUTH_URL: google.authUrl };
  const started = Date.now();
  const proc = spawn(process.execPath, [...(options.nodeArgs ?? []), CLI_MAIN, "authorize", "--config", config, "--port", "0"], {
    env: childEnv(endpoints),
    stdio: ["pipe", "pipe", "pipe"],
  });
  child = proc;
  let stderr = "";
  let stdout = "";
  const waiters: { test: (s: string) => boolean; resolve: (s: string) => void }[] = [];
  proc.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
    for (const waiter of [...waiters]) {
      if (waiter.test(stderr)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(stderr);
      }
    }
  });
  proc.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  const exit = new Promise<{ code: number | null; stderr: string; stdout: string; ms: number }>((resolve) =>
    proc.on("close", (code) => resolve({ code, stderr, stdout, ms: Date.now() - started })),
  );
  return {
    waitFor(text) {
      const test = (s: string): boolean => (typeof text === "string" ? s.includes(text) : text.test(s));
      if (test(stderr)) return Promise.resolve(stderr);
      return new Promise((resolve, reject) => {
        waiters.push({ test, resolve });
        void exit.then(() => reject(new Error(`authorize exited before printing ${String(text)}:\n${stderr}`)));
      });
    },
    type: (line) => proc.stdin.write(`${line}\n`),
    exit,
  };
}

function linkIn(stderr: string): URL {
  const match = /(http:\/\/127\.0\.0\.1:\d+\/o\/oauth2\/v2\/auth\?\S+)/.exec(stderr);
  if (!match?.[1]) throw new Error(`no link in:\n${stderr}`);
  return new URL(match[1]);
}

/** The person's browser: Google's consent page redirects to the loopback address (which nobody may be serving). */
async function consent(link: URL): Promise<string> {
  const answer = await fetch(link, { redirect: "manual" });
  const location = answer.headers.get("location");
  if (!location) throw new Error(`consent page answered ${answer.status}`);
  return location;
}

describe("autoscan authorize in a terminal", () => {
  it("prints the link, takes the pasted redirect URL, stores the tokens (0600) and exits 0", async () => {
    const session = await startAuthorize({});
    const shown = await session.waitFor("Enter authorization code: ");
    const link = linkIn(shown);
    expect(link.searchParams.get("access_type")).toBe("offline");
    expect(link.searchParams.get("prompt")).toBe("consent");
    expect(link.searchParams.get("code_challenge_method")).toBe("S256");
    expect(link.searchParams.get("state")).toMatch(/^[\w-]{20,}$/);
    expect(link.searchParams.get("scope")).toBe("https://www.googleapis.com/auth/drive.metadata.readonly");
    expect(link.searchParams.get("redirect_uri")).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);

    session.type(await consent(link));
    const { code, stderr } = await session.exit;
    expect(code).toBe(0);
    // Plain text for the person: no timestamped log lines.
    // plex_autoscan's lines, which its guides tell people to look for, in its order; autoscan's hints after them.
    const lines = stderr.split("\n");
    const at = (pattern: RegExp): number => lines.findIndex((line) => pattern.test(line));
    // (After the prompt on the same line: a pipe does not echo the Enter a terminal would.)
    const requesting = at(/Requesting access token for auth code 4\/0A/);
    const first = at(/^Retrieved first access token!$/);
    const retrieved = at(/^Access tokens were successfully retrieved!$/);
    expect(requesting).toBeGreaterThan(-1);
    expect(first).toBeGreaterThan(requesting);
    expect(retrieved).toBeGreaterThan(first);
    expect(at(/google-token\.json/)).toBeGreaterThan(retrieved);
    expect(at(/Restart autoscan/)).toBeGreaterThan(retrieved);
    expect(stderr).not.toMatch(/ - (INFO|WARNING|ERROR) - /);

    const tokenFile = join(dir, "google-token.json");
    expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(await readFile(tokenFile, "utf8")) as Record<string, string>;
    expect(saved.client_id).toBe(CLIENT_ID);
    expect(saved.refresh_token).toMatch(/^1\/\//);
    expect(stderr).not.toContain(saved.refresh_token);
    expect(stderr).not.toContain(saved.access_token);
  });

  it("accepts the bare code as copied from the address bar (percent-encoded) and asks again after a bad paste", async () => {
    const session = await startAuthorize({ TEAMDRIVE: true, TEAMDRIVES: ["Media"] });
    const link = linkIn(await session.waitFor("Enter authorization code: "));
    expect(link.searchParams.get("scope")).toBe("https://www.googleapis.com/auth/drive.readonly");
    const location = await consent(link);
    session.type("http://127.0.0.1:1/?state=someone-else&code=4%2Fx");
    await session.waitFor(/another authorization attempt[\s\S]*Enter authorization code: /);
    const encoded = /[?&]code=([^&]+)/.exec(location)?.[1] ?? "";
    expect(encoded).toContain("%2F");
    session.type(encoded);
    const { code, stderr } = await session.exit;
    expect(stderr).toContain("Access tokens were successfully retrieved");
    expect(code).toBe(0);
  });

  it("catches the redirect by itself when the browser reaches the loopback port", async () => {
    const session = await startAuthorize({});
    const link = linkIn(await session.waitFor("Enter authorization code: "));
    const page = await fetch(await consent(link));
    expect(await page.text()).toContain("autoscan received the authorization");
    const { code, stderr } = await session.exit;
    expect(code).toBe(0);
    expect(stderr).toContain("Received the answer from the browser redirect.");
  });

  it("explains an OAuth error from the token endpoint and exits 1", async () => {
    google.failNext("token", { status: 401, reason: "invalid_client" });
    const session = await startAuthorize({});
    const link = linkIn(await session.waitFor("Enter authorization code: "));
    session.type(await consent(link));
    const { code, stderr } = await session.exit;
    expect(code).toBe(1);
    expect(stderr).toMatch(/^autoscan authorize: .*invalid_client.*CLOUD\.CLIENT_ID and CLOUD\.CLIENT_SECRET/m);
    expect(stderr).not.toContain("successfully retrieved");
  });

  it("refuses to run while CLOUD.ENABLED is false", async () => {
    const session = await startAuthorize({ ENABLED: false });
    const { code, stderr } = await session.exit;
    expect(code).toBe(1);
    expect(stderr).toContain("You must enable the CLOUD section in config");
  });

  it("Ctrl-C at the prompt exits 130 with one line: no log line, no stack", async () => {
    const session = await startAuthorize({});
    const shown = await session.waitFor("Enter authorization code: ");
    child?.kill("SIGINT");
    const { code, stderr } = await session.exit;
    expect(code).toBe(130);
    expect(stderr).toBe(`${shown}\n${INTERRUPTED}`);
  });

  it("refuses a pasted line that is neither a code nor the address, and asks again", async () => {
    const session = await startAuthorize({});
    const link = linkIn(await session.waitFor("Enter authorization code: "));
    google.resetCalls();
    session.type("ok");
    await session.waitFor(/neither an authorization code[\s\S]*Enter authorization code: $/);
    expect(google.calls.token).toBe(0);
    session.type(await consent(link));
    const { code } = await session.exit;
    expect(code).toBe(0);
    expect(google.calls.token).toBe(1);
  });

  it("says when no code was entered (end of input)", async () => {
    const session = await startAuthorize({});
    await session.waitFor("Enter authorization code: ");
    child?.stdin.end();
    const { code, stderr } = await session.exit;
    expect(code).toBe(1);
    expect(stderr).toContain("No authorization code was entered.");
  });
});

describe("autoscan authorize when Google cannot be reached", () => {
  /** Google's own host, as the command names it when the default endpoints are used. */
  const GOOGLE_HOST = "oauth2.googleapis.com";

  it("a name that does not resolve (no working DNS): fails within seconds, before the link, saying what to check", async () => {
    // The default endpoints, with a resolver that answers EAI_AGAIN to every name: nothing leaves the machine.
    const session = await startAuthorize({}, { fakeGoogle: false, nodeArgs: ["--import", join(import.meta.dirname, "support", "dns-unreachable.mjs")] });
    const { code, stderr, ms } = await within(session.exit, 10_000, "authorize with no DNS");
    expect(code).toBe(1);
    expect(ms).toBeLessThan(8_000);
    expect(stderr).not.toContain("Enter authorization code");
    expect(stderr).not.toContain("Open this link");
    const lines = stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^autoscan authorize: Cannot reach Google at ${GOOGLE_HOST}: `));
    expect(lines[0]).toContain(`the name ${GOOGLE_HOST} does not resolve (EAI_AGAIN: no answer from the DNS server)`);
    expect(lines[0]).toMatch(/Check DNS and network access from where this command runs/);
    expect(lines[0]).toMatch(/proxy/);
    expect(lines[0]).not.toContain("request to https://");
  });

  it("an address that does not answer: gives up after the timeout, naming it", async () => {
    google.silent = true;
    const session = await startAuthorize({});
    const { code, stderr, ms } = await within(session.exit, 12_000, "authorize with a silent Google");
    expect(code).toBe(1);
    expect(ms).toBeLessThan(9_000);
    expect(google.held).toBe(1);
    const host = new URL(google.tokenUrl).host;
    expect(stderr).toMatch(new RegExp(`^autoscan authorize: Cannot reach Google at ${host.replace(/\./g, "\\.")}: no answer within 5 s\\. Check DNS`));
    expect(stderr).not.toContain("Enter authorization code");
  });

  it("Ctrl-C while it waits for Google exits 130 at once, with one line", async () => {
    google.silent = true;
    const session = await startAuthorize({});
    await within(
      (async () => {
        while (google.held === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      })(),
      8_000,
      "the first request to Google",
    );
    const sent = Date.now();
    child?.kill("SIGINT");
    const { code, stderr } = await within(session.exit, 3_000, "exit after Ctrl-C");
    expect(Date.now() - sent).toBeLessThan(1_500);
    expect(code).toBe(130);
    expect(stderr).toBe(INTERRUPTED);
  });

  it("Ctrl-C while the code is being exchanged exits 130 at once; nothing is saved", async () => {
    const session = await startAuthorize({});
    const link = linkIn(await session.waitFor("Enter authorization code: "));
    const answer = await consent(link);
    google.silent = true;
    session.type(answer);
    await session.waitFor("Requesting access token");
    await within(
      (async () => {
        while (google.held === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      })(),
      5_000,
      "the token request",
    );
    const sent = Date.now();
    child?.kill("SIGINT");
    const { code, stderr } = await within(session.exit, 3_000, "exit after Ctrl-C");
    expect(Date.now() - sent).toBeLessThan(1_500);
    expect(code).toBe(130);
    expect(stderr.endsWith(`…\n${INTERRUPTED}`)).toBe(true);
    await expect(stat(join(dir, "google-token.json"))).rejects.toThrow(/ENOENT/);
  });
});
