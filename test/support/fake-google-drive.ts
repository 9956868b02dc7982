import { createHash } from "node:crypto";

/**
 * The state behind the fake Drive v3 API: files, shared drives and the change log, with the quirks of
 * ../shared/reference/integrations.md §1:
 * - one change per file (a file that changes again moves to the end of the feed, its older entry disappears);
 * - removed files come as `removed: true` with no `file`; trashed ones as `removed: false` + `file.trashed: true`;
 * - `size` is a string, absent on folders; `md5Checksum` only on binary files;
 * - a shared drive's root is a folder named "Drive" (the real name comes from drives.get); My Drive's root is named
 *   "My Drive" and has no parents;
 * - shared-drive items are invisible without `supportsAllDrives=true`.
 */
export const FOLDER = "application/vnd.google-apps.folder";

export interface FakeFile {
  id: string;
  name: string;
  mimeType: string;
  parents: string[];
  trashed: boolean;
  driveId?: string;
  md5Checksum?: string;
  size?: number;
}

export interface FakeSharedDrive {
  id: string;
  name: string;
  members: Set<string>;
}

interface LogEntry {
  readonly changeId: number;
  readonly type: "file" | "drive";
  readonly id: string;
  readonly removed: boolean;
  readonly time: string;
  /** The feed it belongs to: "my" or a shared drive id. */
  readonly feed: string;
}

export interface ChangeQuery {
  readonly start: number;
  readonly pageSize: number;
  readonly driveId?: string;
  readonly allDrives: boolean;
  readonly includeRemoved: boolean;
  readonly principal: string;
}

export const USER = "user";

export function createDriveModel() {
  let counter = 0;
  const newId = (prefix: string): string => `${prefix}${String(++counter).padStart(6, "0")}${"x".repeat(20)}`.slice(0, 28);
  const myRoot = "0AMyDriveRootXXXXXXXXXXPVA";
  const files = new Map<string, FakeFile>();
  const drives = new Map<string, FakeSharedDrive>();
  const log: LogEntry[] = [];
  const latest = new Map<string, LogEntry>();
  let nextChangeId = 1;

  function record(type: "file" | "drive", id: string, removed: boolean, feed: string): void {
    const previous = latest.get(`${type}:${id}`);
    if (previous) log.splice(log.indexOf(previous), 1);
    const entry: LogEntry = { changeId: nextChangeId++, type, id, removed, time: new Date().toISOString(), feed };
    log.push(entry);
    latest.set(`${type}:${id}`, entry);
  }

  function feedOf(file: FakeFile): string {
    return file.driveId ?? "my";
  }

  function must(id: string): FakeFile {
    const file = files.get(id);
    if (!file) throw new Error(`fake drive: no file ${id}`);
    return file;
  }

  function canSee(principal: string, feed: string): boolean {
    if (feed === "my") return principal === USER;
    const drive = drives.get(feed);
    return principal === USER || Boolean(drive?.members.has(principal));
  }

  function fileJson(file: FakeFile): Record<string, unknown> {
    const binary = file.mimeType !== FOLDER && !file.mimeType.startsWith("application/vnd.google-apps.");
    return {
      kind: "drive#file",
      id: file.id,
      name: file.name,
      mimeType: file.mimeType,
      ...(file.parents.length ? { parents: [...file.parents] } : {}),
      trashed: file.trashed,
      ...(file.driveId ? { driveId: file.driveId } : {}),
      ...(binary && file.md5Checksum ? { md5Checksum: file.md5Checksum } : {}),
      ...(binary && file.size !== undefined ? { size: String(file.size) } : {}),
    };
  }

  function addItem(name: string, parent: string, mimeType: string, extra: Partial<FakeFile> = {}): string {
    const parentDrive = drives.has(parent) ? parent : files.get(parent)?.driveId;
    if (parent !== myRoot && !drives.has(parent) && !files.has(parent)) throw new Error(`fake drive: no parent ${parent}`);
    const id = newId("1F");
    const file: FakeFile = { id, name, mimeType, parents: [parent], trashed: false, ...(parentDrive ? { driveId: parentDrive } : {}), ...extra };
    files.set(id, file);
    record("file", id, false, feedOf(file));
    return id;
  }

  return {
    myRootId: myRoot,
    files,
    drives,
    get startPageToken(): string {
      return String(nextChangeId);
    },
    addFolder(name: string, parent: string = myRoot): string {
      return addItem(name, parent, FOLDER);
    },
    addFile(name: string, parent: string = myRoot, options: { mimeType?: string; size?: number; content?: string } = {}): string {
      const content = options.content ?? `${name}-${counter}`;
      return addItem(name, parent, options.mimeType ?? "video/x-matroska", {
        size: options.size ?? 1_000_000 + counter,
        md5Checksum: createHash("md5").update(content).digest("hex"),
      });
    },
    /** A path of folders under a root, created as needed; returns the last folder's id. */
    ensureFolders(path: string, root: string = myRoot): string {
      let parent = root;
      for (const name of path.split("/").filter(Boolean)) {
        const existing = [...files.values()].find((f) => f.parents[0] === parent && f.name === name && f.mimeType === FOLDER && !f.trashed);
        parent = existing?.id ?? this.addFolder(name, parent);
      }
      return parent;
    },
    rename(id: string, name: string): void {
      const file = must(id);
      file.name = name;
      record("file", id, false, feedOf(file));
    },
    move(id: string, parent: string): void {
      const file = must(id);
      file.parents = [parent];
      record("file", id, false, feedOf(file));
    },
    touch(id: string, content = `${Math.random()}`): void {
      const file = must(id);
      file.md5Checksum = createHash("md5").update(content).digest("hex");
      record("file", id, false, feedOf(file));
    },
    /** A metadata-only change (starred, viewed…): same name, parent and content. */
    touchMetadata(id: string): void {
      record("file", id, false, feedOf(must(id)));
    },
    trash(id: string): void {
      const file = must(id);
      file.trashed = true;
      record("file", id, false, feedOf(file));
    },
    remove(id: string): void {
      const file = must(id);
      files.delete(id);
      record("file", id, true, feedOf(file));
    },
    addSharedDrive(name: string, members: readonly string[] = []): string {
      const id = `0A${newId("SD").slice(2, 19)}`;
      drives.set(id, { id, name, members: new Set(members) });
      record("drive", id, false, id);
      return id;
    },
    renameSharedDrive(id: string, name: string): void {
      const drive = drives.get(id);
      if (!drive) throw new Error(`fake drive: no shared drive ${id}`);
      drive.name = name;
      record("drive", id, false, id);
    },
    /** `files.get`: `undefined` = 404. */
    getFile(id: string, principal: string, allDrives: boolean): Record<string, unknown> | undefined {
      if (id === "root" || id === myRoot) {
        return principal === USER ? { kind: "drive#file", id: myRoot, name: "My Drive", mimeType: FOLDER, trashed: false } : { kind: "drive#file", id: `0AServiceRoot${principal.length}XXXXXPVA`, name: "My Drive", mimeType: FOLDER, trashed: false };
      }
      const drive = drives.get(id);
      if (drive) {
        if (!allDrives || !canSee(principal, id)) return undefined;
        return { kind: "drive#file", id, name: "Drive", mimeType: FOLDER, trashed: false, driveId: id };
      }
      const file = files.get(id);
      if (!file || !canSee(principal, feedOf(file)) || (file.driveId && !allDrives)) return undefined;
      return fileJson(file);
    },
    visibleDrives(principal: string): FakeSharedDrive[] {
      return [...drives.values()].filter((d) => canSee(principal, d.id));
    },
    listChanges(query: ChangeQuery): { changes: Record<string, unknown>[]; next?: number; newStart?: number } {
      const selected = log.filter((entry) => {
        if (entry.changeId < query.start) return false;
        if (!canSee(query.principal, entry.feed)) return false;
        if (query.driveId) return entry.feed === query.driveId;
        if (entry.type === "drive") return query.allDrives;
        return entry.feed === "my" || query.allDrives;
      });
      const relevant = query.includeRemoved ? selected : selected.filter((e) => !e.removed);
      const page = relevant.slice(0, query.pageSize);
      const changes = page.map((entry) => changeJson(entry));
      const more = relevant.length > page.length;
      const last = page.at(-1);
      return more && last ? { changes, next: last.changeId + 1 } : { changes, newStart: nextChangeId };
    },
  };

  function changeJson(entry: LogEntry): Record<string, unknown> {
    const base = { kind: "drive#change", changeType: entry.type, time: entry.time, removed: entry.removed };
    if (entry.type === "drive") {
      const drive = drives.get(entry.id);
      return { ...base, driveId: entry.id, ...(drive ? { drive: { kind: "drive#drive", id: drive.id, name: drive.name } } : {}) };
    }
    const file = files.get(entry.id);
    const driveId = entry.feed === "my" ? undefined : entry.feed;
    if (entry.removed || !file) return { ...base, removed: true, fileId: entry.id, ...(driveId ? { driveId } : {}) };
    return { ...base, fileId: entry.id, ...(driveId ? { driveId } : {}), file: fileJson(file) };
  }
}

export type DriveModel = ReturnType<typeof createDriveModel>;
