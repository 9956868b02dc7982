import type { Config, TargetConfig } from "../../config/schema.ts";
import { TargetAuthError, TargetConfigError } from "../../core/errors.ts";
import type { TargetAnswer, TargetProbe } from "../../ops/doctor/targets.ts";
import { createPlexClient } from "../../targets/plex/client.ts";
import { createMediaHttp, type MediaHttp } from "../../targets/media-http.ts";
import { parseEmbyLibraries, parseJellyfinLibraries } from "../../targets/media-wire-schemas.ts";
import { originOf } from "../../http/http-call.ts";

/**
 * `TARGETS` → doctor's probes, one per target, each calling what the target itself calls with the same auth
 * (targets/*-target.ts): the Plex client for another Plex, media-http for Jellyfin and Emby. Whether a target answers
 * at all is asked without credentials (Jellyfin/Emby `GET /System/Info/Public`, Plex `GET /identity`, a relay
 * `GET /health`) through a bare fetch, so the socket's error code is kept for the diagnosis. A relay's credentials are
 * tried with `HEAD /triggers/manual`, which queues nothing. Every error message leaving here has the key blanked.
 */
const MAX_LOOK_BYTES = 256 * 1024;

export function targetProbes(config: Config): TargetProbe[] {
  return Object.entries(config.TARGETS).map(([name, target]) => targetProbe(name, target));
}

function targetProbe(name: string, target: TargetConfig): TargetProbe {
  const timeoutSeconds = Math.min(target.TIMEOUT, 10);
  const timeoutMs = timeoutSeconds * 1000;
  const base = target.URL.replace(/\/+$/, "");
  const common = { name, enabled: target.ENABLED, url: originOf(base), timeoutSeconds, mappings: target.PATH_MAPPINGS };
  const secrets = [target.TOKEN, target.PASSWORD, ...userinfoSecrets(base)].filter((secret) => secret.length > 0);
  const look = (path: string, init: LookInit, signal: AbortSignal) => bareLook(`${base}${path}`, init, timeoutMs, signal);
  switch (target.TYPE) {
    case "jellyfin": {
      const http = mediaHttp(name, "Jellyfin", target, timeoutMs, { Authorization: `MediaBrowser Token="${target.TOKEN}"` });
      return blanked(secrets, {
        ...common,
        kind: "jellyfin",
        reach: async (signal) => publicInfo(await look("/System/Info/Public", {}, signal), "Jellyfin"),
        checkKey: async (signal) => void (await http.request("GET", "/System/Info", { signal })),
        listLibraries: async (signal) =>
          parseJellyfinLibraries((await http.request("GET", "/Library/VirtualFolders", { signal })).body, `GET /Library/VirtualFolders`),
      });
    }
    case "emby": {
      const http = mediaHttp(name, "Emby", target, timeoutMs, { "X-Emby-Token": target.TOKEN });
      // Emby serves its API with or without `/emby` in front (the proxy decides): the form that answered is used after.
      let prefix = "";
      return blanked(secrets, {
        ...common,
        kind: "emby",
        async reach(signal) {
          const plain = await look("/System/Info/Public", {}, signal);
          if (plain.status !== 404) return publicInfo(plain, "Emby");
          const prefixed = await look("/emby/System/Info/Public", {}, signal);
          if (prefixed.status === 200) prefix = "/emby";
          return publicInfo(prefixed, "Emby", "with and without /emby");
        },
        checkKey: async (signal) => void (await http.request("GET", `${prefix}/System/Info`, { signal })),
        listLibraries: async (signal) =>
          parseEmbyLibraries((await http.request("GET", `${prefix}/Library/SelectableMediaFolders`, { signal })).body, `GET /Library/SelectableMediaFolders`),
      });
    }
    case "plex": {
      const client = createPlexClient({ url: target.URL, token: target.TOKEN, timeoutMs });
      return blanked(secrets, {
        ...common,
        kind: "plex",
        async reach(signal) {
          const answer = await look("/identity", {}, signal);
          const version = answer.status === 200 ? jsonField(answer.body, ["MediaContainer", "version"]) : undefined;
          return version ? { server: `Plex Media Server ${version}` } : { foreign: `it answered ${answer.status} to GET /identity` };
        },
        async checkKey(signal) {
          const info = await client.serverInfo(signal);
          return info.friendlyName ? `'${info.friendlyName}'` : undefined;
        },
        listLibraries: async (signal) =>
          (await client.listSections(signal)).flatMap((section) => section.locations.map((path) => ({ library: section.title, path }))),
      });
    }
    case "autoscan": {
      const hasCredentials = target.USERNAME !== "" || target.PASSWORD !== "";
      const basic = Buffer.from(`${target.USERNAME}:${target.PASSWORD}`, "utf8").toString("base64");
      const headers: Record<string, string> = hasCredentials ? { Authorization: `Basic ${basic}` } : {};
      return blanked([...secrets, ...(hasCredentials ? [basic] : [])], {
        ...common,
        kind: "autoscan",
        hasCredentials,
        // Any answer means something listens: Cloudbox/autoscan has no /health (404); ours answers 503 while it
        // cannot store requests, which its own doctor tells.
        async reach(signal) {
          await look("/health", {}, signal);
          return {};
        },
        async checkKey(signal) {
          const { status } = await look("/triggers/manual", { method: "HEAD", headers }, signal);
          if (status >= 200 && status < 300) return undefined;
          if (status === 401 || status === 403) throw new TargetAuthError(`refused (${status})`);
          if (status === 404) throw new TargetConfigError("404");
          throw new Error(`it answered ${status} to HEAD /triggers/manual`);
        },
      });
    }
  }
}

function mediaHttp(name: string, kind: string, target: TargetConfig, timeoutMs: number, headers: Record<string, string>): MediaHttp {
  return createMediaHttp({
    url: target.URL,
    label: `${kind} '${name}'`,
    authKey: `TARGETS.${name}.TOKEN`,
    headers,
    secrets: [target.TOKEN],
    notFoundHint: `check TARGETS.${name}.URL`,
    timeoutMs,
  });
}

/** `GET /System/Info/Public` → `Jellyfin Server 10.11.2 ('den')`, or what answered instead. */
function publicInfo(answer: Look, kind: string, tried = ""): TargetAnswer {
  const version = answer.status === 200 ? jsonField(answer.body, ["Version"]) : undefined;
  if (!version) return { foreign: `it answered ${answer.status} to GET /System/Info/Public${tried ? ` (${tried})` : ""}` };
  const product = jsonField(answer.body, ["ProductName"]) ?? kind;
  const server = jsonField(answer.body, ["ServerName"]);
  return { server: `${product} ${version}${server ? ` ('${server}')` : ""}` };
}

interface LookInit {
  readonly method?: "GET" | "HEAD";
  readonly headers?: Readonly<Record<string, string>>;
}

interface Look {
  readonly status: number;
  readonly body: string;
}

/** One bounded request; a network error or timeout is thrown as fetch throws it (the code under `cause`). */
async function bareLook(url: string, init: LookInit, timeoutMs: number, signal: AbortSignal): Promise<Look> {
  const response = await fetch(url, {
    method: init.method ?? "GET",
    headers: { Accept: "application/json", ...init.headers },
    redirect: "manual",
    signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
  });
  if (!response.body) return { status: response.status, body: "" };
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_LOOK_BYTES) {
      await response.body.cancel().catch(() => undefined);
      break;
    }
    chunks.push(chunk);
  }
  return { status: response.status, body: Buffer.concat(chunks).toString("utf8") };
}

function jsonField(body: string, path: readonly string[]): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  for (const key of path) value = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return typeof value === "string" && value !== "" ? value : undefined;
}


/** A password in the URL (`http://user:pass@host`): fetch refuses such a URL with a message that quotes it. */
function userinfoSecrets(url: string): string[] {
  try {
    const { password } = new URL(url);
    return password ? [password, decodeURIComponent(password)] : [];
  } catch {
    return [];
  }
}

/** Every error out of the probe has the secrets blanked from its message (its class kept). */
function blanked(secrets: readonly string[], probe: TargetProbe): TargetProbe {
  const guard =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await call(...args);
      } catch (error) {
        if (error instanceof Error && secrets.some((secret) => error.message.includes(secret))) {
          const message = secrets.reduce((text, secret) => text.split(secret).join("***"), error.message);
          // A DOMException's message cannot be set: such an error carries no secret anyway (fetch's own words).
          Object.defineProperty(error, "message", { value: message, configurable: true, writable: true });
        }
        throw error;
      }
    };
  return {
    ...probe,
    reach: guard(probe.reach),
    checkKey: guard(probe.checkKey),
    ...(probe.listLibraries ? { listLibraries: guard(probe.listLibraries) } : {}),
  };
}
