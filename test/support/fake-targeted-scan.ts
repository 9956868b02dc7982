import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import type { FakeLibrary } from "./fake-library.ts";
import type { HttpReply, RecordedHttpRequest } from "./fake-media-server.ts";

/**
 * The targeted-scans plugin (d3v1l1989/targeted-scans v1.9.0) inside a fake Jellyfin or Emby, as
 * ../shared/reference/refresh-fastpath-targets.md §1 reads its source:
 * - `GET /Plugins` lists it as `{Name: "TargetedScan", Id, Version, Status: "Active", …}` beside another plugin;
 *   Jellyfin writes the id without dashes, Emby with them; the Jellyfin and Emby builds have different ids;
 * - `POST /Library/ScanPath` `{"Path": …}` (`LibraryId` is read and ignored); an empty path → 400:
 *   1. nothing on disk at the path: an item the library still lists there is dropped (`Removed`), else `PathNotFound`;
 *   2. the library lists the path: `Refreshed` (the plugin queues a full refresh that replaces every child's metadata;
 *      counted in `replacedMetadata`);
 *   3. else the nearest known folder above it (a library location or a folder the library lists) must exist
 *      (`ParentNotFound` otherwise); the path is created (a folder with what it holds on disk) → `Created`;
 * - answers `{ItemId, ItemName, Status, Path, Message}`. Jellyfin's single-path route: `Created`/`Refreshed` 200,
 *   `PathNotFound`/`ParentNotFound` 404, anything else (a `Removed` included: the switch has no arm for it) 500
 *   `Failed`. Emby's build: always 200 with the real `Status`, `Removed` included;
 * - `POST /Library/ScanPaths` `{"Paths": […]}`: distinct paths (case ignored), shallowest first, each as above; 200
 *   with `{Results: [{ItemId, ItemName, Status, Path, Message}]}`, the raw status (`Removed` included), `Message` the
 *   path again; empty `Paths` → 400 with empty `Results`;
 * - without the plugin the routes are not there: the server's plain 404.
 */
export type TargetedScanBuild = "jellyfin" | "emby";

export interface FakeTargetedScanOptions {
  /** Listed in `GET /Plugins` and serving `POST /Library/ScanPath` (default: not installed). */
  readonly installed?: boolean;
  readonly version?: string;
  /** Jellyfin's plugin status (default `Active`). */
  readonly status?: string;
  /** Another id under the same name (a different plugin called TargetedScan). */
  readonly id?: string;
}

export interface ScanPathCall {
  readonly path: string;
  readonly status: string;
  readonly http: number;
  /** Sent in a `POST /Library/ScanPaths` (its index among the batches, from 0). */
  readonly batch?: number;
}

export interface FakeTargetedScan {
  readonly calls: ScanPathCall[];
  /** Paths the plugin sent to a full refresh with ReplaceAllMetadata (an existing item asked for). */
  readonly replacedMetadata: string[];
  set(options: FakeTargetedScanOptions): void;
  plugins(): HttpReply;
  /** `undefined` when the plugin is not installed (the caller answers its own 404). */
  scanPath(req: RecordedHttpRequest): HttpReply | undefined;
  scanPaths(req: RecordedHttpRequest): HttpReply | undefined;
}

const IDS: Readonly<Record<TargetedScanBuild, string>> = {
  jellyfin: "a1b2c3d4e5f67890abcdef1234567890",
  emby: "b2c3d4e5-f6a7-8901-bcde-f12345678901",
};

export function createFakeTargetedScan(input: {
  readonly build: TargetedScanBuild;
  readonly library: FakeLibrary;
  readonly toLocal: (serverPath: string) => string | undefined;
  readonly locations: () => readonly string[];
  readonly options?: FakeTargetedScanOptions;
}): FakeTargetedScan {
  let options: FakeTargetedScanOptions = input.options ?? {};
  const calls: ScanPathCall[] = [];
  const replacedMetadata: string[] = [];
  const { library, build } = input;

  const lists = (path: string): boolean => library.has(path) || library.files().some((file) => file.startsWith(`${path}/`));
  /** An item the library has: a library location, or a folder inside one that holds listed files. */
  const known = (path: string): boolean =>
    input.locations().some((location) => trim(location) === path) ||
    (input.locations().some((location) => path.startsWith(`${trim(location)}/`)) && lists(path));

  let batches = 0;

  /** What the plugin does with one path, and its outcome. */
  function outcome(path: string): { status: string; message?: string } {
    const local = input.toLocal(path);
    const onDisk = local === undefined ? undefined : kindOf(local);
    if (!onDisk) {
      if (!lists(path)) return { status: "PathNotFound", message: `Path not found: ${path}` };
      for (const file of library.files()) if (file === path || file.startsWith(`${path}/`)) library.remove(file);
      return { status: "Removed" };
    }
    if (lists(path)) {
      replacedMetadata.push(path);
      return { status: "Refreshed" };
    }
    let parent = path.slice(0, path.lastIndexOf("/"));
    while (parent.length > 0 && !known(parent)) parent = parent.slice(0, parent.lastIndexOf("/"));
    if (parent.length === 0) return { status: "ParentNotFound", message: `No parent found for: ${path}` };
    if (onDisk === "file") library.add(path);
    else library.scanned(path);
    return { status: "Created" };
  }

  function answer(path: string, status: string, message?: string): HttpReply {
    const http = build === "emby" ? 200 : status === "Created" || status === "Refreshed" ? 200 : status === "PathNotFound" || status === "ParentNotFound" ? 404 : 500;
    const shown = build === "jellyfin" && http === 500 ? "Failed" : status;
    calls.push({ path, status: shown, http });
    const ItemId = status === "Created" || status === "Refreshed" ? createHash("md5").update(path).digest("hex") : null;
    return { status: http, json: { ItemId, ItemName: path.split("/").pop() ?? path, Status: shown, Path: path, Message: message ?? path } };
  }

  return {
    calls,
    replacedMetadata,
    set: (next) => void (options = next),
    plugins() {
      const other = { Name: "TMDb", Version: "10.11.2.0", Id: build === "jellyfin" ? "b8715ed16c4745289ad3f72deb539cd4" : "b8715ed1-6c47-4528-9ad3-f72deb539cd4", Status: "Active", CanUninstall: false, HasImage: false };
      const id = options.id ?? IDS[build];
      const plugin = {
        Name: "TargetedScan",
        Version: options.version ?? "1.9.0.0",
        ConfigurationFileName: "Jellyfin.Plugin.TargetedScan.xml",
        Description: "Scan specific paths",
        Id: id,
        CanUninstall: true,
        HasImage: false,
        ...(build === "jellyfin" ? { Status: options.status ?? "Active" } : {}),
      };
      return { status: 200, json: options.installed ? [other, plugin] : [other] };
    },
    scanPath(req) {
      if (!options.installed) return undefined;
      let body: unknown;
      try {
        body = JSON.parse(req.body);
      } catch {
        return { status: 400, json: { title: "The request body is not JSON.", status: 400 } };
      }
      const raw = typeof body === "object" && body !== null ? Object.entries(body).find(([key]) => key.toLowerCase() === "path")?.[1] : undefined;
      if (typeof raw !== "string" || raw.trim() === "") return { status: 400, json: { title: "The Path field is required.", status: 400 } };
      const path = trim(raw);
      const { status, message } = outcome(path);
      return answer(path, status, message);
    },
    scanPaths(req) {
      if (!options.installed) return undefined;
      let body: unknown;
      try {
        body = JSON.parse(req.body);
      } catch {
        return { status: 400, json: { Results: [] } };
      }
      const raw = typeof body === "object" && body !== null ? Object.entries(body).find(([key]) => key.toLowerCase() === "paths")?.[1] : undefined;
      const list = Array.isArray(raw) ? raw.filter((p): p is string => typeof p === "string" && p.trim() !== "").map(trim) : [];
      if (list.length === 0) return { status: 400, json: { Results: [] } };
      const distinct = [...new Map(list.map((p) => [p.toLowerCase(), p])).values()].sort((a, b) => a.split("/").length - b.split("/").length);
      const batch = batches++;
      const Results = distinct.map((path) => {
        const { status } = outcome(path);
        calls.push({ path, status, http: 200, batch });
        const ItemId = status === "Created" || status === "Refreshed" ? createHash("md5").update(path).digest("hex") : null;
        return { ItemId, ItemName: path.split("/").pop() ?? path, Status: status, Path: path, Message: path };
      });
      return { status: 200, json: { Results } };
    },
  };
}

function kindOf(local: string): "file" | "folder" | undefined {
  try {
    return statSync(local).isDirectory() ? "folder" : "file";
  } catch {
    return undefined;
  }
}

function trim(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}
