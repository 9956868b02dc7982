import { createRequire } from "node:module";
import type Docker from "dockerode";

/** dockerode (and the ssh and HTTP stacks under it, ~20 MB) is loaded when the first client is made, not at start:
 *  most installations use Plex's HTTP API and never talk to Docker. */
const loadDockerode = (): typeof Docker => createRequire(import.meta.url)("dockerode") as typeof Docker;

/**
 * How to reach the Docker engine. `dockerHost` takes DOCKER_HOST's forms (`unix:///path`, `tcp://host:port`,
 * bare `host:port`, `ssh://user@host`); without it dockerode uses the default socket (`/var/run/docker.sock`, or
 * Docker Desktop's `~/.docker/run/docker.sock`), as the docker CLI does (integrations.md §5.2).
 */
export interface DockerConnectionOptions {
  readonly dockerHost?: string;
}

export type DockerEndpoint =
  | { readonly kind: "socket"; readonly socketPath: string }
  | { readonly kind: "tcp"; readonly host: string; readonly port: number; readonly protocol: "http" | "https" }
  | { readonly kind: "ssh"; readonly host: string; readonly port?: number; readonly username?: string }
  | { readonly kind: "default" };

/** DOCKER_HOST → endpoint. Throws a plain Error with the accepted forms when the value cannot be read. */
export function parseDockerHost(value: string | undefined): DockerEndpoint {
  const raw = value?.trim() ?? "";
  if (raw === "") return { kind: "default" };
  if (raw.startsWith("unix://")) {
    const socketPath = raw.slice("unix://".length);
    return socketPath === "" ? { kind: "default" } : { kind: "socket", socketPath };
  }
  if (raw.startsWith("/")) return { kind: "socket", socketPath: raw };
  let url: URL;
  try {
    url = new URL(raw.includes("//") ? raw : `tcp://${raw}`);
  } catch {
    throw new Error(`DOCKER_HOST "${raw}" is not understood; expected unix:///var/run/docker.sock or tcp://host:2375`);
  }
  if (url.protocol === "ssh:") {
    return {
      kind: "ssh",
      host: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    };
  }
  if (url.protocol !== "tcp:" && url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`DOCKER_HOST "${raw}" uses an unsupported scheme; expected unix://, tcp:// or ssh://`);
  }
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 2376 : 2375;
  // The docker CLI's rule: TLS on port 2376 (DOCKER_TLS_VERIFY is read by docker-modem itself).
  const protocol = url.protocol === "https:" || port === 2376 ? "https" : "http";
  return { kind: "tcp", host: url.hostname, port, protocol };
}

/** A dockerode client for the endpoint. Pure: nothing is contacted until the first call. */
export function createDockerClient(options: DockerConnectionOptions = {}): Docker {
  const endpoint = parseDockerHost(options.dockerHost);
  const Docker = loadDockerode();
  switch (endpoint.kind) {
    case "default":
      return new Docker();
    case "socket":
      // `host: undefined` so that a DOCKER_HOST=tcp://… docker-modem finds on its own cannot override the socket.
      return new Docker({ socketPath: endpoint.socketPath, host: undefined });
    case "tcp":
      return new Docker({ host: endpoint.host, port: endpoint.port, protocol: endpoint.protocol });
    case "ssh":
      return new Docker({
        protocol: "ssh",
        host: endpoint.host,
        ...(endpoint.port ? { port: endpoint.port } : {}),
        ...(endpoint.username ? { username: endpoint.username } : {}),
      });
  }
}

/** Where the engine is expected, for error messages. */
export function describeEndpoint(endpoint: DockerEndpoint): string {
  switch (endpoint.kind) {
    case "default":
      return "/var/run/docker.sock";
    case "socket":
      return endpoint.socketPath;
    case "tcp":
      return `${endpoint.protocol === "https" ? "tcp (TLS)" : "tcp"}://${endpoint.host}:${endpoint.port}`;
    case "ssh":
      return `ssh://${endpoint.username ? `${endpoint.username}@` : ""}${endpoint.host}`;
  }
}
