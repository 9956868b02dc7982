import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Docker from "dockerode";
import { describe, it } from "vitest";

/**
 * The real Docker engine for the exec tests (`eval "$(../shared/tools/docker-sandbox env)"` sets DOCKER_HOST).
 * When it cannot be reached the Docker suites are skipped LOUDLY (a console line with the reason, and vitest's skip),
 * never passed silently; under CI=true with AUTOSCAN_REQUIRE_DOCKER=1 they fail instead.
 */
export type Engine = { readonly ok: true; readonly docker: Docker } | { readonly ok: false; readonly reason: string };

export async function probeEngine(): Promise<Engine> {
  const host = process.env.DOCKER_HOST;
  const docker = host?.startsWith("unix://")
    ? new Docker({ socketPath: host.slice("unix://".length) })
    : new Docker();
  try {
    await Promise.race([
      docker.ping(),
      new Promise((_, reject) => setTimeout(() => reject(new Error("no answer within 5 s")), 5000).unref()),
    ]);
    const images = await docker.listImages({ filters: { reference: [BASE_IMAGE] } });
    if (images.length === 0) return { ok: false, reason: `the base image ${BASE_IMAGE} is not in the engine` };
    return { ok: true, docker };
  } catch (error) {
    return { ok: false, reason: `Docker engine unreachable at ${host ?? "/var/run/docker.sock"}: ${String(error)}` };
  }
}

/** `describe` for Docker suites: runs them, or skips them loudly, or fails when Docker is required. */
export function describeDocker(name: string, engine: Engine, body: (docker: Docker) => void): void {
  if (engine.ok) {
    describe(name, () => body(engine.docker));
    return;
  }
  const required = process.env.CI === "true" && process.env.AUTOSCAN_REQUIRE_DOCKER === "1";
  if (required) {
    describe(name, () => {
      it("needs the Docker engine (CI=true, AUTOSCAN_REQUIRE_DOCKER=1)", () => {
        throw new Error(`Docker tests are required here but ${engine.reason}`);
      });
    });
    return;
  }
  console.warn(`\n*** SKIPPED Docker tests "${name}": ${engine.reason}. Start it: ../shared/tools/docker-sandbox up ***\n`);
  describe.skip(`${name} [SKIPPED: ${engine.reason}]`, () => body(undefined as unknown as Docker));
}

export const BASE_IMAGE = "node:24-bookworm-slim";
const CONTEXT = dirname(fileURLToPath(import.meta.url));
const CONTEXT_FILES = ["Dockerfile", "fake-scanner.js", "fake-sqlite.js"];

/** Tags of the fake Plex image: one plain, and one per real image name the presets recognise. */
export interface FakePlexImage {
  readonly plain: string;
  readonly pmsDocker: string;
  readonly linuxserver: string;
  readonly hotio: string;
}

/** Builds the fake Plex image once per content (tagged by a hash of the build context, so reruns are instant). */
export async function ensureFakePlexImage(docker: Docker): Promise<FakePlexImage> {
  const hash = createHash("sha256");
  for (const file of CONTEXT_FILES) hash.update(file).update(readFileSync(join(CONTEXT, file)));
  const tag = hash.digest("hex").slice(0, 16);
  // A registry-looking host that cannot exist, so these tags are never mistaken for the real images.
  const images: FakePlexImage = {
    plain: `autoscan-test/fake-plex:${tag}`,
    pmsDocker: `autoscan-test.invalid/plexinc/pms-docker:${tag}`,
    linuxserver: `autoscan-test.invalid/linuxserver/plex:${tag}`,
    hotio: `autoscan-test.invalid/hotio/plex:${tag}`,
  };
  const present = await docker.listImages({ filters: { reference: [images.plain] } });
  if (present.length === 0) {
    const stream = await docker.buildImage(
      { context: CONTEXT, src: readdirSync(CONTEXT).filter((file) => CONTEXT_FILES.includes(file)) },
      { t: images.plain, networkmode: "none", rm: true },
    );
    const output = await new Promise<{ error?: string }[]>((resolve, reject) =>
      docker.modem.followProgress(stream, (error: Error | null, result: { error?: string }[]) =>
        error ? reject(error) : resolve(result),
      ),
    );
    const failed = output.find((event) => event.error);
    if (failed) throw new Error(`Building the fake Plex image failed: ${failed.error}`);
  }
  for (const name of [images.pmsDocker, images.linuxserver, images.hotio]) {
    const [repo, version] = splitTag(name);
    await docker.getImage(images.plain).tag({ repo, tag: version });
  }
  return images;
}

function splitTag(name: string): [string, string] {
  const at = name.lastIndexOf(":");
  return [name.slice(0, at), name.slice(at + 1)];
}

/** Containers a suite started, removed in afterAll. */
export interface ContainerPool {
  start(
    image: string,
    options?: { env?: Record<string, string>; name?: string; binds?: string[] },
  ): Promise<Docker.Container & { name: string }>;
  removeAll(): Promise<void>;
}

export function createContainerPool(docker: Docker, prefix: string): ContainerPool {
  const started: Docker.Container[] = [];
  let count = 0;
  const run = `${process.pid}-${Date.now().toString(36)}`;
  return {
    async start(image, options = {}) {
      const name = options.name ?? `autoscan-test-${prefix}-${run}-${++count}`;
      const container = await docker.createContainer({
        name,
        Image: image,
        Env: Object.entries(options.env ?? {}).map(([key, value]) => `${key}=${value}`),
        HostConfig: { NetworkMode: "none", AutoRemove: false, Binds: options.binds ?? [] },
        StopTimeout: 1,
      });
      started.push(container);
      await container.start();
      return Object.assign(container, { name });
    },
    async removeAll() {
      await Promise.all(started.map((container) => container.remove({ force: true }).catch(() => undefined)));
      started.length = 0;
    },
  };
}

/** A unique name no container has. */
export function absentContainerName(): string {
  return `autoscan-test-absent-${process.pid}-${Date.now().toString(36)}`;
}

export interface FakeScannerCall {
  script: string;
  argv: string[];
  env: Record<string, string>;
  uid: number;
  user: string;
  cwd: string;
  pid: number;
}

/** Runs a small Node snippet as root in the container (test plumbing: argv only, no shell). */
async function node(docker: Docker, container: string, code: string, ...args: string[]): Promise<string> {
  const exec = await docker.getContainer(container).exec({
    Cmd: ["node", "-e", code, ...args],
    AttachStdout: true,
    AttachStderr: true,
  });
  const stream = await exec.start({ hijack: true, stdin: false });
  const chunks: Buffer[] = [];
  stream.on("data", (chunk: Buffer) => chunks.push(chunk));
  await new Promise((resolve) => stream.once("end", resolve));
  // Drop the 8-byte frame headers: the snippets print short ASCII on stdout only.
  const out: Buffer[] = [];
  const all = Buffer.concat(chunks);
  for (let at = 0; at + 8 <= all.length; ) {
    const size = all.readUInt32BE(at + 4);
    if (all[at] === 1) out.push(all.subarray(at + 8, at + 8 + size));
    at += 8 + size;
  }
  return Buffer.concat(out).toString("utf8");
}

/** What the fake scanner recorded in the container, oldest first. */
export async function readFakeScannerCalls(docker: Docker, container: string): Promise<FakeScannerCall[]> {
  const text = await node(
    docker,
    container,
    "try { process.stdout.write(require('fs').readFileSync('/var/log/fake-scanner/calls.jsonl', 'utf8')) } catch {}",
  );
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as FakeScannerCall);
}

/** Tells the fake scanner in the container how to behave (`{ exit, sleepMs, stderr, sections }`); `{}` resets. */
export async function setFakeScannerControl(docker: Docker, container: string, control: object): Promise<void> {
  await node(
    docker,
    container,
    "require('fs').writeFileSync('/var/log/fake-scanner/control.json', process.argv[1])",
    JSON.stringify(control),
  );
}

/** Starts a fake scanner in the background (Detach), as Plex's own scans would run, sleeping `ms`. */
export async function startBackgroundScanner(docker: Docker, container: string, ms: number): Promise<void> {
  const exec = await docker.getContainer(container).exec({
    Cmd: ["/usr/lib/plexmediaserver/Plex Media Scanner", "--scan", "--section", "1"],
    Env: [`FAKE_SCANNER_SLEEP_MS=${ms}`],
    User: "plex",
  });
  await exec.start({ Detach: true });
}
