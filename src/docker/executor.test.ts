// @module-tag process
import { spawnSync } from "node:child_process";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TargetUnavailableError } from "../core/errors.ts";
import { classifyDockerError, type ClassifyContext } from "./classify-error.ts";
import { ContainerNotFoundError, ContainerNotRunningError, DockerUnreachableError } from "./errors.ts";
import { createDockerExecutor } from "./executor.ts";

async function pingHere(socket: string): Promise<string> {
  const error = await createDockerExecutor({ dockerHost: `unix://${socket}` })
    .ping()
    .catch((e: unknown) => e);
  return error instanceof Error ? error.message : "no error";
}

function pingAsNobody(socket: string): string {
  const script =
    `import { createDockerExecutor } from ${JSON.stringify(new URL("./executor.ts", import.meta.url).pathname)};\n` +
    `try { await createDockerExecutor({ dockerHost: ${JSON.stringify(`unix://${socket}`)} }).ping(); console.log("no error"); }\n` +
    "catch (error) { console.log(error.message); }";
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    uid: 65534,
    gid: 65534,
    encoding: "utf8",
  });
  return child.stdout + child.stderr;
}

const MOUNT_HINT = "give the autoscan container the Docker socket for scanner mode";

describe("Docker executor without an engine", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "autoscan-docker-"));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it("says to mount the socket when there is none", async () => {
    const socket = join(dir, "missing", "docker.sock");
    const executor = createDockerExecutor({ dockerHost: `unix://${socket}` });
    const error = await executor.exec("plex", ["/bin/true"]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DockerUnreachableError);
    expect(error).toBeInstanceOf(TargetUnavailableError);
    expect((error as Error).message).toContain(`No Docker socket at ${socket}`);
    expect((error as Error).message).toContain(MOUNT_HINT);
  });

  it("says what to do when the engine refuses the connection", async () => {
    // A stale path that is not a listening socket (a plain file): connect() answers ECONNREFUSED.
    const socket = join(dir, "refused.sock");
    await writeFile(socket, "");
    const executor = createDockerExecutor({ dockerHost: `unix://${socket}` });
    const error = await executor.ping().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DockerUnreachableError);
    expect((error as Error).message).toMatch(/Cannot reach the Docker engine at .*refused\.sock/);
  });

  it("says so when the socket's permissions keep us out", async () => {
    const socket = join(dir, "private.sock");
    const server: Server = createServer((connection) => connection.destroy());
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    await chmod(dir, 0o755);
    await chmod(socket, 0o600);
    try {
      // root is never refused, so as root ask the same question from a child running as nobody.
      const message = process.getuid?.() === 0 ? pingAsNobody(socket) : await pingHere(socket);
      expect(message).toContain(`Permission denied on the Docker socket ${socket}`);
      expect(message).toContain(MOUNT_HINT);
    } finally {
      server.close();
    }
  });

  it("refuses an empty command line and bad environment names before calling Docker", async () => {
    const executor = createDockerExecutor({ dockerHost: `unix://${join(dir, "none.sock")}` });
    await expect(executor.exec("plex", [])).rejects.toThrow("Nothing to run");
    await expect(executor.exec("plex", ["x"], { env: { "A=B": "1" } })).rejects.toThrow("Invalid environment variable name");
  });
});

describe("classifyDockerError", () => {
  const context: ClassifyContext = {
    container: "plex",
    endpoint: "/var/run/docker.sock",
    listRunning: async () => ["plex-server", "sonarr"],
    stateOf: async () => "restarting",
  };

  it("turns EACCES into the permission message (as a non-root user would see it)", async () => {
    const cause = Object.assign(new Error("connect EACCES /var/run/docker.sock"), {
      code: "EACCES",
      address: "/var/run/docker.sock",
    });
    const error = await classifyDockerError(cause, context);
    expect(error).toBeInstanceOf(DockerUnreachableError);
    expect(error.message).toContain("Permission denied on the Docker socket /var/run/docker.sock");
    expect(error.message).toContain("stat -c %g /var/run/docker.sock");
    expect(error.message).toContain(MOUNT_HINT);
  });

  it("names the container and lists the running ones on 404", async () => {
    const cause = Object.assign(new Error("(HTTP code 404) no such container - No such container: plex "), {
      statusCode: 404,
      json: { message: "No such container: plex" },
    });
    const error = await classifyDockerError(cause, context);
    expect(error).toBeInstanceOf(ContainerNotFoundError);
    expect(error.message).toBe(
      'No container named "plex" (DOCKER_NAME). Running containers: plex-server, sonarr. ' +
        "Set DOCKER_NAME to the Plex container's name.",
    );
  });

  it("says a restarting container is restarting (409), retryable", async () => {
    const cause = Object.assign(new Error("(HTTP code 409) container stopped/paused - Container abc is restarting"), {
      statusCode: 409,
      json: null,
    });
    const error = await classifyDockerError(cause, context);
    expect(error).toBeInstanceOf(ContainerNotRunningError);
    expect(error).toBeInstanceOf(TargetUnavailableError);
    expect(error.message).toBe('Container "plex" is restarting; the scan will be retried once it is running');
  });

  it("keeps the daemon's words for other statuses", async () => {
    const cause = Object.assign(new Error("(HTTP code 500) server error - oops "), { statusCode: 500, json: { message: "oops" } });
    const error = await classifyDockerError(cause, context);
    expect(error.message).toBe("Docker engine answered 500: oops");
    expect(error).not.toBeInstanceOf(TargetUnavailableError);
  });
});
