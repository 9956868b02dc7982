import type { Config, TargetConfig } from "../../config/schema.ts";
import { TargetAuthError, TargetConfigError, describeError } from "../../core/errors.ts";
import { httpCall, originOf, type HttpAnswer } from "../../http/http-call.ts";
import { jsonBody } from "../../http/json-body.ts";
import { createPathMapper } from "../../paths/mapping.ts";
import { withTrailingSlash } from "../../paths/normalize.ts";
import type { LibraryFolder } from "../../targets/library-folders.ts";
import { createMediaHttp } from "../../targets/media-http.ts";
import { parseEmbyLibraries, parseJellyfinLibraries } from "../../targets/media-wire-schemas.ts";
import { createScanPathPlugin, scanRouteWords, type ScanPathPluginState } from "../../targets/scan-path-plugin.ts";
import { createPlexClient } from "../../targets/plex/client.ts";
import { audiobookshelfDoctorProbe, KeyCheckFailure } from "./audiobookshelf.ts";
import { fail, ok, skip, skipAfter, warn, type CheckResult, type Findings } from "./check.ts";
import { contains, keyChecks, unique } from "./mappings.ts";
import { blankError, blankerOf } from "./secrets.ts";
import { foreignCheck, unreachableCheck } from "./unreachable.ts";

/**
 * The further scan targets (`TARGETS`), each as Plex is checked: does it answer (a call without credentials:
 * Jellyfin/Emby `GET /System/Info/Public`, Plex `GET /identity`, a relay `GET /health`; if not, the likely cause in
 * unreachable.ts's words), is the key accepted (through what the target itself calls, with the same auth: the Plex
 * client, media-http; a relay's credentials with `HEAD /triggers/manual`, which queues nothing), which libraries it
 * has, and whether its `PATH_MAPPINGS` lead from the primary Plex's form into them. A disabled target is one skipped
 * line; a relay (another autoscan) has no libraries. Every error of a probe is blanked of the key where it is caught.
 */
interface TargetProbe {
  readonly name: string;
  /** The target's config, read as it is (TYPE, ENABLED, PATH_MAPPINGS). */
  readonly target: TargetConfig;
  /** The URL shown: scheme, host and port only (a path or userinfo may carry a secret). */
  readonly url: string;
  readonly timeoutSeconds: number;
  /** Whether USERNAME/PASSWORD are set (a relay's messages). */
  readonly hasCredentials: boolean;
  /** The target's secrets (its key, password, the URL's userinfo) blanked from a message. */
  readonly blank: (text: string) => string;
  /** A call without credentials: what answered (`Jellyfin Server 10.11.2 ('den')`), or what answered instead. */
  reach(signal: AbortSignal): Promise<{ readonly server?: string; readonly foreign?: string }>;
  /** A call with the key: what it learnt; `TargetAuthError` refused, `TargetConfigError` no such route (404). */
  checkKey(signal: AbortSignal): Promise<string | undefined>;
  /** Every library folder; absent for a relay. `TargetAuthError` when the key may not list them. */
  readonly listLibraries?: (signal: AbortSignal) => Promise<readonly LibraryFolder[]>;
  /** Jellyfin and Emby: whether the TargetedScan plugin is there (`GET /Plugins`); never throws. */
  readonly scanPlugin?: (signal: AbortSignal) => Promise<ScanPathPluginState>;
}

/** Per kind: its name in messages, where it listens, a URL that works from a container, where its key is found. */
const KINDS: Readonly<Record<TargetConfig["TYPE"], { label: string; port: string; example: string; keyHelp: (name: string) => string }>> = {
  plex: {
    label: "Plex",
    port: "Plex listens on 32400",
    example: "http://plex-4k:32400",
    keyHelp: (name) =>
      `Set TARGETS.${name}.TOKEN to that server's token: in its Plex Web open any item's '…' → Get Info → View XML, and copy the X-Plex-Token value from the address.`,
  },
  jellyfin: {
    label: "Jellyfin",
    port: "Jellyfin listens on 8096",
    example: "http://jellyfin:8096",
    keyHelp: (name) => `Set TARGETS.${name}.TOKEN to an API key of that server: Dashboard → API Keys → '+'.`,
  },
  emby: {
    label: "Emby",
    port: "Emby listens on 8096",
    example: "http://emby:8096",
    keyHelp: (name) => `Set TARGETS.${name}.TOKEN to an API key of that server: Settings → Advanced → API Keys → New API Key.`,
  },
  audiobookshelf: {
    label: "Audiobookshelf",
    port: "Audiobookshelf listens on 80 in its container (13378 is the usual published port)",
    example: "http://audiobookshelf:80",
    keyHelp: (name) =>
      `Set TARGETS.${name}.API_KEY to an API key of an admin user: in Audiobookshelf (2.26.0 or newer) Settings → API Keys → Add API Key.`,
  },
  autoscan: {
    label: "the other autoscan",
    port: "another autoscan listens on its SERVER_PORT, 3467 unless set",
    example: "http://autoscan-nas:3467",
    keyHelp: (name) =>
      `Set TARGETS.${name}.USERNAME and PASSWORD to that autoscan's SERVER_AUTH_USERNAME and SERVER_AUTH_PASSWORD (Cloudbox/autoscan: its authentication username and password).`,
  },
};

export async function targetsChecks(config: Config, inContainer: boolean, findings: Findings, signal: AbortSignal): Promise<CheckResult[]> {
  // Each target on its own, at once: one that hangs costs its timeout, not the sum of them.
  return (await Promise.all(Object.entries(config.TARGETS).map(([name, target]) => targetChecks(targetProbe(name, target), inContainer, findings, signal)))).flat();
}

async function targetChecks(probe: TargetProbe, inContainer: boolean, findings: Findings, signal: AbortSignal): Promise<CheckResult[]> {
  const { name } = probe;
  const id = `target:${name}`;
  const kind = KINDS[probe.target.TYPE].label;
  if (!probe.target.ENABLED) return [skip(id, name, `TARGETS.${name}.ENABLED is false: not checked, and no scan goes to it.`)];
  const server = { id, title: name, url: probe.url, label: kind, setting: `TARGETS.${name}.URL`, portHint: KINDS[probe.target.TYPE].port };
  let answer: Awaited<ReturnType<TargetProbe["reach"]>>;
  try {
    answer = await probe.reach(signal);
  } catch (error) {
    const unreachable = unreachableCheck({ ...server, example: KINDS[probe.target.TYPE].example, timeoutSeconds: probe.timeoutSeconds }, blankError(error, probe.blank), inContainer);
    return [unreachable, ...skipAfter(stepsOf(probe), id, `${name} did not answer.`)];
  }
  if (answer.foreign !== undefined) return [foreignCheck(server, answer.foreign), ...skipAfter(stepsOf(probe), id, `${name} did not answer as ${kind} does.`)];
  const out: CheckResult[] = [ok(id, name, `${answer.server ?? kind} answers at ${probe.url}.`)];
  const key = await keyCheck(probe, signal);
  out.push(key.check);
  if (key.skipReason !== undefined) return [...out, ...skipAfter(stepsOf(probe), `${id}.key`, key.skipReason)];
  if (!probe.listLibraries) return out;
  let folders: readonly LibraryFolder[];
  try {
    folders = await probe.listLibraries(signal);
  } catch (error) {
    out.push(librariesFailed(probe, blankError(error, probe.blank)), ...skipAfter(stepsOf(probe), `${id}.libraries`, `${name} did not list its libraries.`));
    return out;
  }
  const libraries = unique(folders.map((folder) => folder.library));
  out.push(
    libraries.length === 0
      ? warn(`${id}.libraries`, `${name} libraries`, `${name} has no library yet: every scan sent to it is skipped.`, `Add your libraries in ${kind} first.`)
      : ok(`${id}.libraries`, `${name} libraries`, `${libraries.length} librar${libraries.length === 1 ? "y" : "ies"}: ${libraries.join(", ")}.`),
  );
  out.push(...targetMappingChecks(probe, kind, folders, findings));
  if (probe.scanPlugin) out.push(scanRouteCheck(probe, await probe.scanPlugin(signal)));
  return out;
}

/** Jellyfin and Emby: how scans go (the TargetedScan plugin or the server's monitor), with how to install the plugin. */
function scanRouteCheck(probe: TargetProbe, state: ScanPathPluginState): CheckResult {
  const { name } = probe;
  const type = probe.target.TYPE === "emby" ? "emby" : "jellyfin";
  const said = scanRouteWords(state, name, type);
  const id = `target:${name}.scan-route`;
  const title = `${name} scans`;
  // The plugin is optional: without it scans still work, minutes instead of seconds. The line says how to install it.
  if (said.route === "plugin" || state.state === "absent") return ok(id, title, `${said.words}${said.install ? `; ${said.install}` : ""}.`);
  return warn(id, title, `${said.words}.`, `Give TARGETS.${name}.TOKEN an administrator's API key, so autoscan can see whether the TargetedScan plugin is there.`);
}

/** The key (a relay: the trigger's credentials) check, and why the checks after it are skipped when it fails. */
async function keyCheck(probe: TargetProbe, signal: AbortSignal): Promise<{ readonly check: CheckResult; readonly skipReason?: string }> {
  const { name } = probe;
  const id = `target:${name}.key`;
  const kind = KINDS[probe.target.TYPE].label;
  const relay = probe.target.TYPE === "autoscan";
  const title = relay ? `${name} trigger` : `${name} key`;
  const setting = relay ? `TARGETS.${name}.USERNAME and PASSWORD` : keySetting(probe);
  try {
    const learnt = await probe.checkKey(signal);
    const detail = relay
      ? probe.hasCredentials
        ? `Its /triggers/manual takes ${setting}.`
        : "Its /triggers/manual answers without credentials."
      : `${kind} accepted ${setting}${learnt ? ` (${learnt})` : ""}.`;
    return { check: ok(id, title, detail) };
  } catch (caught) {
    const error = blankError(caught, probe.blank);
    if (caught instanceof KeyCheckFailure) return { check: fail(id, title, probe.blank(caught.message), caught.fix), skipReason: `${name} cannot take scans with that key.` };
    if (error instanceof TargetAuthError) {
      const detail = relay
        ? probe.hasCredentials
          ? `That autoscan refused ${setting} (401 at ${probe.url}/triggers/manual).`
          : `That autoscan wants credentials for /triggers/manual (401): TARGETS.${name}.USERNAME and PASSWORD are empty.`
        : `${kind} rejected ${setting} (401 at ${probe.url}).`;
      return { check: fail(id, title, detail, KINDS[probe.target.TYPE].keyHelp(name)), skipReason: `${name} refused the ${relay ? "credentials" : "key"}.` };
    }
    if (relay && error instanceof TargetConfigError) {
      const detail = `That autoscan answered 404 at ${probe.url}/triggers/manual: its manual trigger is off, or the URL is not an autoscan.`;
      const fix = `Set SERVER_AUTH_USERNAME and SERVER_AUTH_PASSWORD on that autoscan (its /triggers/manual is off without them) and the same in TARGETS.${name}.USERNAME and PASSWORD, or put its /<SERVER_PASS> in TARGETS.${name}.URL; else check the URL.`;
      return { check: fail(id, title, detail, fix), skipReason: `${name}'s trigger is not there.` };
    }
    const detail = `${name} answers, but the check with the ${relay ? "credentials" : "key"} failed: ${describeError(error)}.`;
    const fix = `Check that TARGETS.${name}.URL points at ${kind} itself, and ${kind}'s log.`;
    return { check: fail(id, title, detail, fix), skipReason: `The ${relay ? "trigger" : "key"} check failed.` };
  }
}

function librariesFailed(probe: TargetProbe, error: unknown): CheckResult {
  const { name } = probe;
  const id = `target:${name}.libraries`;
  const kind = KINDS[probe.target.TYPE].label;
  if (error instanceof TargetAuthError) {
    const detail = `${kind} accepted ${keySetting(probe)} but refuses to list the libraries with it (a user's key, not an administrator's?).`;
    return fail(id, `${name} libraries`, detail, KINDS[probe.target.TYPE].keyHelp(name));
  }
  return fail(id, `${name} libraries`, `Listing the libraries failed: ${describeError(error)}.`, `Check ${kind}'s log.`);
}

/** Where the target's key is set: `TARGETS.<name>.TOKEN`, or `API_KEY` for Audiobookshelf. */
function keySetting({ name, target }: TargetProbe): string {
  return `TARGETS.${name}.${target.TYPE === "audiobookshelf" ? "API_KEY" : "TOKEN"}`;
}

/** A target's checks in order (id → title): a failed one skips those after it. A relay has no libraries. */
function stepsOf({ name, target, listLibraries, scanPlugin }: TargetProbe): Record<string, string> {
  const steps = { [`target:${name}`]: name, [`target:${name}.key`]: target.TYPE === "autoscan" ? `${name} trigger` : `${name} key` };
  const route = scanPlugin ? { [`target:${name}.scan-route`]: `${name} scans` } : {};
  return listLibraries ? { ...steps, [`target:${name}.libraries`]: `${name} libraries`, [`target:${name}.mappings`]: `${name} mappings`, ...route } : steps;
}

/**
 * A target's PATH_MAPPINGS against its library folders. A key in no library is a warning (the folders mapped there
 * are skipped by that target only); a library folder nothing reaches is a warning (it never gets a scan from us).
 */
function targetMappingChecks(probe: TargetProbe, kind: string, folders: readonly LibraryFolder[], findings: Findings): CheckResult[] {
  const { name } = probe;
  const mappings = probe.target.PATH_MAPPINGS;
  const keys = Object.keys(mappings);
  const known = unique(folders.map((folder) => folder.path)).join(", ") || "(none)";
  const out = keyChecks(keys, folders, `${name}'s `, (key) => [`target:${name}.mapping:${key}`, `${name} mapping`], (key) =>
    warn(
      `target:${name}.mapping:${key}`,
      `${name} mapping`,
      `TARGETS.${name}.PATH_MAPPINGS key '${key}' is in no library of ${name}: folders mapped there are skipped by ${name}.`,
      `The key is the folder as ${name} sees it: use one of its library folders (${known}), with the primary Plex's form of it in the list.`,
    ),
  );
  const mapper = createPathMapper({ mappings });
  const primary = findings.sections?.flatMap((section) => section.locations);
  for (const folder of folders) {
    const id = `target:${name}.library:${folder.path}`;
    const title = `${name} library`;
    const byKey = keys.find((key) => contains(key, folder.path) || contains(folder.path, key));
    if (byKey !== undefined) {
      out.push(ok(id, title, `'${folder.path}' (${folder.library}) is reached through the mapping '${byKey}'.`));
      continue;
    }
    if (!primary) {
      out.push(skip(id, title, `No mapping reaches '${folder.path}' (${folder.library}); whether a primary Plex folder does needs Plex's library list: ${findings.sectionsUnknown ?? "Plex was not asked."}`));
      continue;
    }
    const from = primary.find((location) => {
      const mapped = mapper.toServer(location).path;
      return contains(mapped, folder.path) || contains(folder.path, mapped);
    });
    out.push(
      from !== undefined
        ? ok(id, title, `'${folder.path}' (${folder.library}) is reached from the primary Plex's '${from}'${keys.length === 0 ? " (no PATH_MAPPINGS: the same path)" : ""}.`)
        : warn(
            id,
            title,
            `No folder of the primary Plex reaches '${folder.path}' (${folder.library}) on ${name}: scans there never go to ${kind}.`,
            `If ${name} sees one of Plex's folders at '${folder.path}', add "${withTrailingSlash(folder.path)}": ["<that folder as the primary Plex sees it>/"] to TARGETS.${name}.PATH_MAPPINGS.`,
          ),
    );
  }
  return out;
}

function targetProbe(name: string, target: TargetConfig): TargetProbe {
  const timeoutSeconds = Math.min(target.TIMEOUT, 10);
  const timeoutMs = timeoutSeconds * 1000;
  const base = target.URL.replace(/\/+$/, "");
  const hasCredentials = target.USERNAME !== "" || target.PASSWORD !== "";
  const basic = Buffer.from(`${target.USERNAME}:${target.PASSWORD}`, "utf8").toString("base64");
  const blank = blankerOf([target.TOKEN, target.API_KEY, target.PASSWORD, ...(hasCredentials ? [basic] : [])], base);
  const common = { name, target, url: originOf(base), timeoutSeconds, hasCredentials, blank };
  const look = (path: string, signal: AbortSignal, method = "GET", headers: Record<string, string> = {}) =>
    httpCall({ method, url: `${base}${path}`, headers: { Accept: "application/json", ...headers }, timeoutMs, maxBytes: 256 * 1024, overCap: "cut", signal });
  const mediaHttp = (kind: string, headers: Record<string, string>) =>
    createMediaHttp({ url: target.URL, label: `${kind} '${name}'`, authKey: `TARGETS.${name}.TOKEN`, headers, secrets: [target.TOKEN], notFoundHint: `check TARGETS.${name}.URL`, timeoutMs });
  switch (target.TYPE) {
    case "jellyfin": {
      const http = mediaHttp("Jellyfin", { Authorization: `MediaBrowser Token="${target.TOKEN}"` });
      return {
        ...common,
        reach: async (signal) => publicInfo(await look("/System/Info/Public", signal), "Jellyfin"),
        checkKey: async (signal) => void (await http.request("GET", "/System/Info", { signal })),
        listLibraries: async (signal) => parseJellyfinLibraries((await http.request("GET", "/Library/VirtualFolders", { signal })).body, `GET /Library/VirtualFolders`),
        scanPlugin: (signal) =>
          createScanPathPlugin({ kind: "jellyfin", label: `Jellyfin '${name}'`, call: (method, route, request) => http.request(method, route, request) }).detect(signal),
      };
    }
    case "emby": {
      const http = mediaHttp("Emby", { "X-Emby-Token": target.TOKEN });
      // Emby serves its API with or without `/emby` in front (the proxy decides): the form that answered is used after.
      let prefix = "";
      return {
        ...common,
        async reach(signal) {
          const plain = await look("/System/Info/Public", signal);
          if (plain.status !== 404) return publicInfo(plain, "Emby");
          const prefixed = await look("/emby/System/Info/Public", signal);
          if (prefixed.status === 200) prefix = "/emby";
          return publicInfo(prefixed, "Emby", "with and without /emby");
        },
        checkKey: async (signal) => void (await http.request("GET", `${prefix}/System/Info`, { signal })),
        listLibraries: async (signal) =>
          parseEmbyLibraries((await http.request("GET", `${prefix}/Library/SelectableMediaFolders`, { signal })).body, `GET /Library/SelectableMediaFolders`),
        scanPlugin: (signal) =>
          createScanPathPlugin({ kind: "emby", label: `Emby '${name}'`, call: (method, route, request) => http.request(method, `${prefix}${route}`, request) }).detect(signal),
      };
    }
    case "plex": {
      const client = createPlexClient({ url: target.URL, token: target.TOKEN, timeoutMs });
      return {
        ...common,
        async reach(signal) {
          const answer = await look("/identity", signal);
          const version = answer.status === 200 ? jsonField(answer.body, ["MediaContainer", "version"]) : undefined;
          return version ? { server: `Plex Media Server ${version}` } : { foreign: `it answered ${answer.status} to GET /identity` };
        },
        async checkKey(signal) {
          const info = await client.serverInfo(signal);
          return info.friendlyName ? `'${info.friendlyName}'` : undefined;
        },
        listLibraries: async (signal) => (await client.listSections(signal)).flatMap((section) => section.locations.map((path) => ({ library: section.title, path }))),
      };
    }
    case "audiobookshelf":
      return { ...common, ...audiobookshelfDoctorProbe(name, target, timeoutMs, (path, signal) => look(path, signal)) };
    case "autoscan": {
      const headers: Record<string, string> = hasCredentials ? { Authorization: `Basic ${basic}` } : {};
      return {
        ...common,
        // Any answer means something listens: Cloudbox/autoscan has no /health (404); ours answers 503 while it
        // cannot store requests, which its own doctor tells.
        async reach(signal) {
          await look("/health", signal);
          return {};
        },
        async checkKey(signal) {
          const { status } = await look("/triggers/manual", signal, "HEAD", headers);
          if (status >= 200 && status < 300) return undefined;
          if (status === 401 || status === 403) throw new TargetAuthError(`refused (${status})`);
          if (status === 404) throw new TargetConfigError("404");
          throw new Error(`it answered ${status} to HEAD /triggers/manual`);
        },
      };
    }
  }
}

/** `GET /System/Info/Public` → `Jellyfin Server 10.11.2 ('den')`, or what answered instead. */
function publicInfo(answer: HttpAnswer, kind: string, tried = ""): { server?: string; foreign?: string } {
  const version = answer.status === 200 ? jsonField(answer.body, ["Version"]) : undefined;
  if (!version) return { foreign: `it answered ${answer.status} to GET /System/Info/Public${tried ? ` (${tried})` : ""}` };
  const product = jsonField(answer.body, ["ProductName"]) ?? kind;
  const server = jsonField(answer.body, ["ServerName"]);
  return { server: `${product} ${version}${server ? ` ('${server}')` : ""}` };
}

function jsonField(body: string, path: readonly string[]): string | undefined {
  let value = jsonBody(body);
  for (const key of path) value = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return typeof value === "string" && value !== "" ? value : undefined;
}
