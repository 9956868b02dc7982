import { createServer as createHttpServer } from "node:http";
import { createServer as createTcpServer, type Server, type Socket } from "node:net";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveSettings } from "../src/config/settings.ts";
import type { CheckResult } from "../src/ops/doctor/check.ts";
import { loadDoctorConfig, runDoctor } from "../src/ops/doctor/doctor.ts";
import { captureLog } from "./support/capture-log.ts";
import { SILENT_HOST, droppingNamespace, startCliInDroppingNamespace } from "./support/dropping-namespace.ts";
import { describeFaults } from "./support/faults/describe-faults.ts";
import { freePort } from "./support/free-port.ts";
import { runCli, within } from "./support/run-cli.ts";

/**
 * A Plex (or a target) that does not answer is told apart by what happened, each with its own fix: no answer within
 * the timeout (the connection never completed: a wrong address or a firewall, the most common first-day mistake; or
 * it connected and no answer came: a hung server), connection refused (nothing listens there), a name that does not
 * resolve, and "answered, but not as Plex does", said only when bytes did come back. The connection that never
 * completes is real: doctor and the server run in a network namespace of their own that drops the packets
 * (support/dropping-namespace.ts); the other cases are local servers, through the doctor's own entry in-process.
 */
const SERVER_PASS = "doctor-unreachable-pass-0123456789abcdef";
let root: string;
let caseCount = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "autoscan-doctor-unreachable-"));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function writeCase(config: Record<string, unknown>): Promise<{ path: string; dir: string }> {
  const dir = join(root, `case-${++caseCount}`);
  await mkdir(dir, { recursive: true });
  const path = join(dir, "config.json");
  await writeFile(path, JSON.stringify({ SERVER_PASS, SERVER_IP: "127.0.0.1", PLEX_TOKEN: "plex-token-0123456789", SERVER_PATH_MAPPINGS: {}, ...config }, null, 2));
  return { path, dir };
}

/** The doctor's checks for this config, in-process, as `autoscan doctor` runs them (outside a container). */
async function doctor(config: Record<string, unknown>): Promise<(id: string) => CheckResult> {
  const { path, dir } = await writeCase({ SERVER_PORT: await freePort(), ...config });
  const settings = resolveSettings({ config: path, "data-dir": dir }, {}, root);
  const report = await runDoctor({ settings, env: {}, loaded: await loadDoctorConfig(settings, {}), log: captureLog().log, inContainer: false });
  return (id) => {
    const found = report.checks.find((check) => check.id === id);
    if (!found) throw new Error(`no check ${id} in ${report.checks.map((check) => check.id).join(", ")}`);
    return found;
  };
}

describeFaults("a Plex whose connection never completes (a network namespace of its own drops the packets)", droppingNamespace(), {}, () => {
  const plexUrl = `http://${SILENT_HOST}:32400`;
  const jellyfinUrl = `http://${SILENT_HOST}:8096`;
  const config = {
    PLEX_LOCAL_URL: plexUrl,
    PLEX_TIMEOUT: 1,
    TARGETS: { den: { TYPE: "jellyfin", URL: jellyfinUrl, TOKEN: "jellyfin-key-0123456789", TIMEOUT: 1 } },
  };

  it("doctor says 'no answer within', a wrong address or a firewall, and never 'but not as Plex' (real process)", async () => {
    const { path, dir } = await writeCase({ ...config, SERVER_PORT: 3467 });
    const run = startCliInDroppingNamespace(["doctor", "--config", path, "--data-dir", dir]);
    const { code } = await run.exited;
    const out = run.stdout();
    expect(run.stderr()).toBe("");
    expect(code).toBe(1);
    const plexLine = out.split("\n").find((line) => line.startsWith("✗ Plex "));
    expect(plexLine).toContain(`no answer within 1 s from ${plexUrl}: a wrong address or a firewall (the connection never completed).`);
    expect(plexLine).toContain("Fix: Check the address in PLEX_LOCAL_URL");
    expect(plexLine).toContain("firewall between autoscan and Plex");
    const denLine = out.split("\n").find((line) => line.startsWith("✗ den "));
    expect(denLine).toContain(`no answer within 1 s from ${jellyfinUrl}: a wrong address or a firewall`);
    expect(denLine).toContain("TARGETS.den.URL");
    for (const wrong of ["but not as", "connection refused", "proxy or another app"]) expect(out).not.toContain(wrong);
  });

  it("the server's start-up log says the same, once, and the server keeps running (real process)", async () => {
    const { path, dir } = await writeCase({ ...config, SERVER_PORT: 3467 });
    const server = startCliInDroppingNamespace(["server", "--config", path, "--data-dir", dir], { timeoutMs: 30_000 });
    try {
      await within(
        (async () => {
          while (!`${server.stdout()}${server.stderr()}`.includes("Start-up checks:")) {
            if (server.process.exitCode !== null) throw new Error(`the server exited: ${server.stderr()}`);
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        })(),
        20_000,
        "the start-up checks",
      );
    } finally {
      server.process.kill("SIGTERM");
      await server.exited;
    }
    const lines = `${server.stdout()}${server.stderr()}`.split("\n");
    const plex = lines.filter((line) => line.includes("WARNING - DOCTOR") && line.includes(": Plex: "));
    expect(plex).toHaveLength(1);
    expect(plex[0]).toContain(`Plex: no answer within 1 s from ${plexUrl}: a wrong address or a firewall (the connection never completed). Fix: Check the address in PLEX_LOCAL_URL`);
    expect(lines.some((line) => line.includes("den: no answer within 1 s from"))).toBe(true);
    expect(lines.join("\n")).not.toContain("but not as");
  });
});

describe("each other way of not answering, in its own words", () => {
  const servers: Server[] = [];
  const sockets: Socket[] = [];
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });

  /** A server on 127.0.0.1 (TCP, or HTTP when `reply` answers), its URL. */
  async function listen(server: Server): Promise<string> {
    servers.push(server);
    server.on("connection", (socket: Socket) => {
      sockets.push(socket);
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    return `http://127.0.0.1:${String(address.port)}`;
  }

  it("connection refused: nothing listens at the URL, is Plex running, is the port right", async () => {
    const url = `http://127.0.0.1:${String(await freePort())}`;
    const check = await doctor({ PLEX_LOCAL_URL: url });
    expect(check("plex.reach")).toMatchObject({
      status: "error",
      detail: `connection refused: nothing listens at ${url} (is Plex running? is the port right?).`,
      fix: "Start Plex, or correct the address and port in PLEX_LOCAL_URL (Plex listens on 32400).",
    });
  });

  it("a DNS server that does not answer in time: 'no answer within', the name had no address yet (real process)", async () => {
    const { path, dir } = await writeCase({ PLEX_LOCAL_URL: "http://plex.home.arpa:32400", PLEX_TIMEOUT: 1, SERVER_PORT: await freePort() });
    const hook = fileURLToPath(new URL("./support/dns-unreachable.mjs", import.meta.url));
    const run = await runCli(["doctor", "--config", path, "--data-dir", dir], { nodeArgs: ["--import", hook], env: { AUTOSCAN_TEST_DNS_DELAY_MS: "3000" } });
    const plexLine = run.stdout.split("\n").find((line) => line.startsWith("✗ Plex "));
    expect(plexLine).toContain("no answer within 1 s from http://plex.home.arpa:32400: the name plex.home.arpa had no address yet (the DNS server does not answer).");
    expect(plexLine).toContain("Fix: Check the DNS of where autoscan runs");
    expect(run.stdout).not.toContain("but not as");
  });

  it("a connection taken but never answered: 'no answer within', a hung server, not a firewall", async () => {
    const url = await listen(createTcpServer(() => {}));
    const check = await doctor({ PLEX_LOCAL_URL: url, PLEX_TIMEOUT: 1 });
    expect(check("plex.reach").detail).toBe(`no answer within 1 s from ${url}: it took the connection but never answered (Plex hangs, or what listens there waits on something).`);
    expect(check("plex.reach").fix).toContain("restart it if it hangs");
  });

  it("a real wrong answer (a router's login page where Plex should be): 'answered, but not as Plex does', with what it said", async () => {
    const router = createHttpServer((_, res) => res.writeHead(200, { "Content-Type": "text/html" }).end("<html><title>Router login</title><body>Sign in to your router</body></html>"));
    const url = await listen(router);
    const check = await doctor({ PLEX_LOCAL_URL: url });
    expect(check("plex.reach")).toMatchObject({ status: "error", detail: expect.stringMatching(new RegExp(`^${url.replace(/\./g, "\\.")} answered, but not as Plex does: .*Router login`)) });
    expect(check("plex.reach").fix).toContain("not at a proxy or another app");
    expect(check("plex.reach").detail).not.toContain("no answer within");

    const other = await listen(createHttpServer((_, res) => res.writeHead(404, { "Content-Type": "text/html" }).end("<h1>Not Found</h1>")));
    expect((await doctor({ PLEX_LOCAL_URL: other }))("plex.reach").detail).toBe(`${other} answered, but not as Plex does: it answered 404 to GET /.`);
  });

  it("another protocol on the port (an SSH server): answered, but not in HTTP", async () => {
    const url = await listen(createTcpServer((socket) => socket.end("SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n")));
    const check = await doctor({ PLEX_LOCAL_URL: url });
    expect(check("plex.reach").detail).toMatch(new RegExp(`^${url.replace(/\./g, "\\.")} answered, but not as Plex does: it does not speak HTTP there \\(HPE_`));
  });

  it("a connection closed without a word: said so, not 'answered'", async () => {
    const url = await listen(createTcpServer((socket) => socket.destroy()));
    const check = await doctor({ PLEX_LOCAL_URL: url });
    expect(check("plex.reach").detail).toBe(`${url} took the connection, then closed it without an answer (ECONNRESET).`);
  });
});
