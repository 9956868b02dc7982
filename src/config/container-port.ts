import { readFile } from "node:fs/promises";
import type { ConfigSource } from "./provenance.ts";

/**
 * The port autoscan listens on inside its image. The Dockerfile sets `SERVER_PORT=3467` in the image's environment,
 * which wins over config.json (plex_autoscan's environment override), and docker-compose.yml publishes that port
 * (`${AUTOSCAN_PORT:-3467}:3467`): so the port Docker publishes always answers, whatever SERVER_PORT a moved-over
 * config.json holds. The host's side is AUTOSCAN_PORT in `.env`: that is where a plex_autoscan user keeps their port.
 */
export const IMAGE_PORT = 3467;

/** What decides the port in a container: where the server listens, why, and what config.json itself says. */
export interface ContainerPortFacts {
  /** SERVER_PORT as the server uses it (after the environment). */
  readonly listenPort: number;
  readonly source: ConfigSource | undefined;
  /** SERVER_PORT as written in config.json; undefined when it is not written there. */
  readonly filePort: number | undefined;
}

/** One finding about the container's port: `problem` when the user must act (then `fix` says how). */
export interface ContainerPortFinding {
  readonly problem: boolean;
  readonly detail: string;
  readonly fix?: string;
}

/**
 * Where autoscan listens in its container, and what a config.json SERVER_PORT that the image overrides means for the
 * user: their apps' URLs keep the old port only if the host publishes it, which `.env`'s AUTOSCAN_PORT does.
 */
export function describeContainerPort(facts: ContainerPortFacts): ContainerPortFinding {
  const { listenPort, filePort } = facts;
  if (listenPort !== IMAGE_PORT) {
    const where = facts.source?.kind === "config.json" ? "config.json's SERVER_PORT" : `SERVER_PORT=${String(listenPort)} in the container's environment`;
    return {
      problem: false,
      detail:
        `autoscan listens on ${String(listenPort)} in this container (${where}), not on the image's ${String(IMAGE_PORT)}, which docker-compose.yml publishes: ` +
        `right with network_mode: host; otherwise publish ${String(listenPort)} ("<host port>:${String(listenPort)}"), or drop SERVER_PORT and set the host port with AUTOSCAN_PORT in .env.`,
    };
  }
  if (filePort !== undefined && filePort !== listenPort) {
    return {
      problem: true,
      detail:
        `config.json says SERVER_PORT ${String(filePort)}; in this container autoscan listens on ${String(IMAGE_PORT)} (the image sets SERVER_PORT, which wins), ` +
        `and your apps reach it at the host port Docker publishes, AUTOSCAN_PORT in .env (${String(IMAGE_PORT)} unless set).`,
      fix:
        `To keep ${String(filePort)} in your *arr URLs, set AUTOSCAN_PORT=${String(filePort)} in .env and run 'docker compose up -d'; ` +
        `then delete SERVER_PORT from config.json (in the container it is always ${String(IMAGE_PORT)}). ` +
        `Apps on the same Docker network skip the host: their URL is http://autoscan:${String(IMAGE_PORT)}/…. ` +
        `With network_mode: host nothing is published: set SERVER_PORT: "${String(filePort)}" under the service's environment: instead.`,
    };
  }
  return {
    problem: false,
    detail: `autoscan listens on ${String(IMAGE_PORT)} in this container (the image's port); Docker publishes it on the host at AUTOSCAN_PORT in .env (${String(IMAGE_PORT)} unless set).`,
  };
}

/**
 * The facts for `describeContainerPort`. config.json's own SERVER_PORT differs from the one in use only when the
 * environment overrides it. A file that cannot be read or parsed says nothing here: loading it says why.
 */
export async function loadContainerPortFacts(configPath: string, listenPort: number, source: ConfigSource | undefined): Promise<ContainerPortFacts> {
  return { listenPort, source, filePort: filePortOf(await readFile(configPath, "utf8").catch(() => "")) };
}

/** SERVER_PORT as config.json writes it (a whole number), or undefined. */
export function filePortOf(text: string): number | undefined {
  try {
    const value = (JSON.parse(text.replace(/^\uFEFF/, "")) as { SERVER_PORT?: unknown } | null)?.SERVER_PORT;
    return typeof value === "number" && Number.isInteger(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
