/**
 * A small FUSE file system, served by this process straight over `/dev/fuse` (no libfuse): it mirrors a backing
 * folder, and can be told to behave like the file systems that hurt us, for real, through the kernel:
 *
 * - `fsyncdir EPERM` — refuses fsync on a folder, as SMB/CIFS mounts and several FUSE file systems do;
 * - `fsync EIO` — every fsync/fdatasync of a file answers EIO, as a failing network disk does;
 * - `readonly on` — every change answers EROFS, as a share the server turned read-only;
 * - `getattr-hang <name>` — once a folder named `<name>` has been listed, a look at what it is (GETATTR) is never
 *   answered (lookups and listings still are): a mount that stops answering right after a folder's listing;
 * - `... ok` / `readonly off` — back to normal.
 *
 * Usage: node fuse-passthrough.ts <backing folder> <mount point>. Prints `mounted` once the mount is up; reads commands
 * from stdin, one a line, and answers `ok <command>`. Serves until /dev/fuse reports the mount gone (umount).
 *
 * The protocol is `linux/fuse.h` (7.31): every request is one read of the device (a 40-byte header, then the
 * operation's struct), every answer one write (a 16-byte header with the negated errno, then the reply struct).
 * Attributes and entries are never cached (valid 0), files are opened with direct I/O, so every write and fsync of
 * the process under test reaches this server and gets its answer.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { constants } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const [backingArg, mountArg] = process.argv.slice(2);
if (!backingArg || !mountArg) throw new Error("usage: fuse-passthrough.ts <backing folder> <mount point>");
const backing: string = backingArg;
const mountPoint: string = mountArg;

const E = constants.errno;
const modes = { fsyncdir: "ok", fsync: "ok", readonly: false, getattrHang: "", getattrHangListed: false };

const OP = {
  LOOKUP: 1, FORGET: 2, GETATTR: 3, SETATTR: 4, MKDIR: 9, UNLINK: 10, RMDIR: 11, RENAME: 12, LINK: 13, OPEN: 14,
  READ: 15, WRITE: 16, STATFS: 17, RELEASE: 18, FSYNC: 20, SETXATTR: 21, GETXATTR: 22, LISTXATTR: 23,
  REMOVEXATTR: 24, FLUSH: 25, INIT: 26, OPENDIR: 27, READDIR: 28, RELEASEDIR: 29, FSYNCDIR: 30, ACCESS: 34,
  CREATE: 35, INTERRUPT: 36, DESTROY: 38, BATCH_FORGET: 42, RENAME2: 45,
} as const;

// Node ids ↔ paths relative to the backing folder ("" is the root, id 1).
const paths = new Map<bigint, string>([[1n, ""]]);
const ids = new Map<string, bigint>([["", 1n]]);
let nextId = 2n;
function idFor(rel: string): bigint {
  let id = ids.get(rel);
  if (id === undefined) {
    id = nextId++;
    ids.set(rel, id);
    paths.set(id, rel);
  }
  return id;
}
function pathOf(id: bigint): string {
  const rel = paths.get(id);
  if (rel === undefined) throw Object.assign(new Error("stale node"), { errno: -E.ESTALE });
  return rel;
}
const full = (rel: string): string => (rel === "" ? backing : join(backing, rel));
const child = (parent: bigint, name: string): string => (pathOf(parent) === "" ? name : `${pathOf(parent)}/${name}`);

function moved(from: string, to: string): void {
  for (const [rel, id] of [...ids]) {
    if (rel !== from && !rel.startsWith(`${from}/`)) continue;
    const next = to + rel.slice(from.length);
    ids.delete(rel);
    const existing = ids.get(next);
    if (existing !== undefined) paths.delete(existing);
    ids.set(next, id);
    paths.set(id, next);
  }
}

// Open handles: fh → fd of the backing file (or folder).
const handles = new Map<bigint, number>();
let nextFh = 1n;

interface Reply {
  readonly error: number;
  readonly body: Buffer;
}
const ok = (body: Buffer = Buffer.alloc(0)): Reply => ({ error: 0, body });
const fail = (errno: number): Reply => ({ error: -errno, body: Buffer.alloc(0) });
const NO_REPLY = Symbol("no reply");

function attr(st: fs.Stats): Buffer {
  const b = Buffer.alloc(88);
  const sec = (ms: number): bigint => BigInt(Math.floor(ms / 1000));
  const nsec = (ms: number): number => Math.floor((ms % 1000) * 1e6);
  b.writeBigUInt64LE(BigInt(st.ino), 0);
  b.writeBigUInt64LE(BigInt(st.size), 8);
  b.writeBigUInt64LE(BigInt(st.blocks), 16);
  b.writeBigUInt64LE(sec(st.atimeMs), 24);
  b.writeBigUInt64LE(sec(st.mtimeMs), 32);
  b.writeBigUInt64LE(sec(st.ctimeMs), 40);
  b.writeUInt32LE(nsec(st.atimeMs), 48);
  b.writeUInt32LE(nsec(st.mtimeMs), 52);
  b.writeUInt32LE(nsec(st.ctimeMs), 56);
  b.writeUInt32LE(st.mode, 60);
  b.writeUInt32LE(st.nlink, 64);
  b.writeUInt32LE(st.uid, 68);
  b.writeUInt32LE(st.gid, 72);
  b.writeUInt32LE(st.rdev, 76);
  b.writeUInt32LE(st.blksize, 80);
  return b;
}

function entry(rel: string): Buffer {
  const st = fs.lstatSync(full(rel));
  const head = Buffer.alloc(40);
  head.writeBigUInt64LE(idFor(rel), 0);
  return Buffer.concat([head, attr(st)]);
}

function attrOut(st: fs.Stats): Buffer {
  return Buffer.concat([Buffer.alloc(16), attr(st)]);
}

function openOut(fh: bigint): Buffer {
  const b = Buffer.alloc(16);
  b.writeBigUInt64LE(fh, 0);
  b.writeUInt32LE(1, 8); // FOPEN_DIRECT_IO
  return b;
}

function names(body: Buffer, count: number): string[] {
  const out: string[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const end = body.indexOf(0, at);
    out.push(body.subarray(at, end < 0 ? body.length : end).toString("utf8"));
    at = end + 1;
  }
  return out;
}

const WRITE_FLAGS = fs.constants.O_WRONLY | fs.constants.O_RDWR;
const CHANGES: ReadonlySet<number> = new Set([OP.SETATTR, OP.MKDIR, OP.UNLINK, OP.RMDIR, OP.RENAME, OP.RENAME2, OP.LINK, OP.CREATE, OP.WRITE]);

function handle(opcode: number, nodeid: bigint, body: Buffer): Reply | typeof NO_REPLY {
  if (modes.readonly && CHANGES.has(opcode)) return fail(E.EROFS);
  switch (opcode) {
    case OP.INIT: {
      const b = Buffer.alloc(64);
      b.writeUInt32LE(7, 0);
      b.writeUInt32LE(31, 4);
      b.writeUInt32LE(body.readUInt32LE(8), 8); // max_readahead as offered
      b.writeUInt32LE(1 << 5, 12); // FUSE_BIG_WRITES
      b.writeUInt16LE(16, 16);
      b.writeUInt16LE(12, 18);
      b.writeUInt32LE(128 * 1024, 20); // max_write
      b.writeUInt32LE(1, 24); // time_gran: 1 ns
      return ok(b);
    }
    case OP.DESTROY:
      return ok();
    case OP.FORGET:
    case OP.BATCH_FORGET:
    case OP.INTERRUPT:
      return NO_REPLY;
    case OP.LOOKUP:
      return ok(entry(child(nodeid, names(body, 1)[0] ?? "")));
    case OP.GETATTR: {
      if (modes.getattrHangListed && pathOf(nodeid).split("/").at(-1) === modes.getattrHang) return NO_REPLY;
      const fh = body.readBigUInt64LE(8);
      const fd = body.readUInt32LE(0) & 1 ? handles.get(fh) : undefined;
      return ok(attrOut(fd === undefined ? fs.lstatSync(full(pathOf(nodeid))) : fs.fstatSync(fd)));
    }
    case OP.SETATTR: {
      const valid = body.readUInt32LE(0);
      const fd = valid & (1 << 6) ? handles.get(body.readBigUInt64LE(8)) : undefined;
      const path = full(pathOf(nodeid));
      if (valid & 1) {
        if (fd === undefined) fs.chmodSync(path, body.readUInt32LE(68) & 0o7777);
        else fs.fchmodSync(fd, body.readUInt32LE(68) & 0o7777);
      }
      if (valid & (1 << 3)) {
        if (fd === undefined) fs.truncateSync(path, Number(body.readBigUInt64LE(16)));
        else fs.ftruncateSync(fd, Number(body.readBigUInt64LE(16)));
      }
      if (valid & ((1 << 4) | (1 << 5) | (1 << 7) | (1 << 8))) {
        const now = Date.now() / 1000;
        const st = fs.lstatSync(path);
        const atime = valid & (1 << 7) ? now : valid & (1 << 4) ? Number(body.readBigUInt64LE(32)) + body.readUInt32LE(56) / 1e9 : st.atimeMs / 1000;
        const mtime = valid & (1 << 8) ? now : valid & (1 << 5) ? Number(body.readBigUInt64LE(40)) + body.readUInt32LE(60) / 1e9 : st.mtimeMs / 1000;
        fs.utimesSync(path, atime, mtime);
      }
      return ok(attrOut(fd === undefined ? fs.lstatSync(path) : fs.fstatSync(fd)));
    }
    case OP.MKDIR: {
      const rel = child(nodeid, names(body.subarray(8), 1)[0] ?? "");
      fs.mkdirSync(full(rel), body.readUInt32LE(0) & ~body.readUInt32LE(4) & 0o7777);
      return ok(entry(rel));
    }
    case OP.UNLINK:
    case OP.RMDIR: {
      const rel = child(nodeid, names(body, 1)[0] ?? "");
      if (opcode === OP.UNLINK) fs.unlinkSync(full(rel));
      else fs.rmdirSync(full(rel));
      return ok();
    }
    case OP.RENAME:
    case OP.RENAME2: {
      const newdir = body.readBigUInt64LE(0);
      if (opcode === OP.RENAME2 && body.readUInt32LE(8) !== 0) return fail(E.EINVAL);
      const [from = "", to = ""] = names(body.subarray(opcode === OP.RENAME ? 8 : 16), 2);
      const fromRel = child(nodeid, from);
      const toRel = child(newdir, to);
      fs.renameSync(full(fromRel), full(toRel));
      moved(fromRel, toRel);
      return ok();
    }
    case OP.LINK: {
      const rel = child(nodeid, names(body.subarray(8), 1)[0] ?? "");
      fs.linkSync(full(pathOf(body.readBigUInt64LE(0))), full(rel));
      return ok(entry(rel));
    }
    case OP.OPEN:
    case OP.OPENDIR: {
      const flags = body.readUInt32LE(0);
      if (modes.readonly && flags & WRITE_FLAGS) return fail(E.EROFS);
      const clean = flags & ~(fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOCTTY | fs.constants.O_TRUNC);
      const fd = fs.openSync(full(pathOf(nodeid)), opcode === OP.OPENDIR ? fs.constants.O_RDONLY | fs.constants.O_DIRECTORY : clean);
      const fh = nextFh++;
      handles.set(fh, fd);
      return ok(openOut(fh));
    }
    case OP.CREATE: {
      const flags = body.readUInt32LE(0);
      const mode = body.readUInt32LE(4) & ~body.readUInt32LE(8) & 0o7777;
      const rel = child(nodeid, names(body.subarray(16), 1)[0] ?? "");
      const fd = fs.openSync(full(rel), (flags & ~fs.constants.O_NOCTTY) | fs.constants.O_CREAT, mode);
      const fh = nextFh++;
      handles.set(fh, fd);
      return ok(Buffer.concat([entry(rel), openOut(fh)]));
    }
    case OP.READ: {
      const fd = handles.get(body.readBigUInt64LE(0));
      if (fd === undefined) return fail(E.EBADF);
      const out = Buffer.alloc(body.readUInt32LE(16));
      const n = fs.readSync(fd, out, 0, out.length, Number(body.readBigUInt64LE(8)));
      return ok(out.subarray(0, n));
    }
    case OP.WRITE: {
      const fd = handles.get(body.readBigUInt64LE(0));
      if (fd === undefined) return fail(E.EBADF);
      const size = body.readUInt32LE(16);
      const n = fs.writeSync(fd, body, 40, size, Number(body.readBigUInt64LE(8)));
      const b = Buffer.alloc(8);
      b.writeUInt32LE(n, 0);
      return ok(b);
    }
    case OP.STATFS: {
      const s = fs.statfsSync(backing);
      const b = Buffer.alloc(80);
      b.writeBigUInt64LE(BigInt(s.blocks), 0);
      b.writeBigUInt64LE(BigInt(s.bfree), 8);
      b.writeBigUInt64LE(BigInt(s.bavail), 16);
      b.writeBigUInt64LE(BigInt(s.files), 24);
      b.writeBigUInt64LE(BigInt(s.ffree), 32);
      b.writeUInt32LE(s.bsize, 40);
      b.writeUInt32LE(255, 44);
      b.writeUInt32LE(s.bsize, 48);
      return ok(b);
    }
    case OP.RELEASE:
    case OP.RELEASEDIR: {
      const fh = body.readBigUInt64LE(0);
      const fd = handles.get(fh);
      handles.delete(fh);
      if (fd !== undefined) fs.closeSync(fd);
      return ok();
    }
    case OP.FSYNC: {
      if (modes.readonly) return fail(E.EROFS);
      if (modes.fsync !== "ok") return fail(E[modes.fsync as keyof typeof E] ?? E.EIO);
      const fd = handles.get(body.readBigUInt64LE(0));
      if (fd === undefined) return fail(E.EBADF);
      if (body.readUInt32LE(8) & 1) fs.fdatasyncSync(fd);
      else fs.fsyncSync(fd);
      return ok();
    }
    case OP.FSYNCDIR: {
      if (modes.fsyncdir !== "ok") return fail(E[modes.fsyncdir as keyof typeof E] ?? E.EPERM);
      const fd = handles.get(body.readBigUInt64LE(0));
      if (fd !== undefined) fs.fsyncSync(fd);
      return ok();
    }
    case OP.READDIR: {
      const offset = Number(body.readBigUInt64LE(8));
      const size = body.readUInt32LE(16);
      const rel = pathOf(nodeid);
      const list = [".", "..", ...fs.readdirSync(full(rel))];
      if (modes.getattrHang !== "" && rel.split("/").at(-1) === modes.getattrHang) modes.getattrHangListed = true;
      const parts: Buffer[] = [];
      let used = 0;
      for (let i = offset; i < list.length; i++) {
        const name = Buffer.from(list[i] ?? "", "utf8");
        const length = (24 + name.length + 7) & ~7;
        if (used + length > size) break;
        const d = Buffer.alloc(length);
        d.writeBigUInt64LE(BigInt(i + 1), 0); // ino: any non-zero
        d.writeBigUInt64LE(BigInt(i + 1), 8); // off of the next entry
        d.writeUInt32LE(name.length, 16);
        d.writeUInt32LE(0, 20); // DT_UNKNOWN: the kernel looks it up
        name.copy(d, 24);
        parts.push(d);
        used += length;
      }
      return ok(Buffer.concat(parts));
    }
    case OP.FLUSH:
    case OP.ACCESS:
      return ok();
    case OP.GETXATTR:
    case OP.LISTXATTR:
    case OP.SETXATTR:
    case OP.REMOVEXATTR:
    default:
      return fail(E.ENOSYS);
  }
}

// Mount: the kernel takes the file system's end from the `fd=` of the mount call, made by `mount` with our fd as 3.
const dev = fs.openSync("/dev/fuse", "r+");
const mounted = spawnSync(
  "mount",
  ["-i", "-t", "fuse", "-o", "fd=3,rootmode=40000,user_id=0,group_id=0,default_permissions", "autoscan-faults", mountPoint],
  { stdio: ["ignore", "inherit", "inherit", dev], timeout: 10_000 },
);
if (mounted.status !== 0) {
  process.stderr.write(`mount failed (${String(mounted.status)})\n`);
  process.exit(2);
}

createInterface({ input: process.stdin }).on("line", (line) => {
  const [what, value] = line.trim().split(/\s+/);
  if (what === "fsyncdir" && value) modes.fsyncdir = value;
  else if (what === "fsync" && value) modes.fsync = value;
  else if (what === "readonly") modes.readonly = value === "on";
  else if (what === "getattr-hang") Object.assign(modes, { getattrHang: value ?? "", getattrHangListed: false });
  else return void process.stdout.write(`unknown ${line}\n`);
  process.stdout.write(`ok ${line.trim()}\n`);
});

const buffer = Buffer.alloc(128 * 1024 + 4096);
function serve(): void {
  fs.read(dev, buffer, 0, buffer.length, null, (error, length) => {
    if (error) {
      if (error.code === "EINTR" || error.code === "EAGAIN" || error.code === "ENOENT") return serve();
      // ENODEV: unmounted. Anything else: nothing more to serve either.
      process.exit(0);
    }
    const opcode = buffer.readUInt32LE(4);
    const unique = buffer.readBigUInt64LE(8);
    const nodeid = buffer.readBigUInt64LE(16);
    const body = Buffer.from(buffer.subarray(40, length));
    let reply: Reply | typeof NO_REPLY;
    try {
      reply = handle(opcode, nodeid, body);
    } catch (caught) {
      const errno = (caught as NodeJS.ErrnoException).errno;
      reply = fail(typeof errno === "number" ? Math.abs(errno) : E.EIO);
    }
    if (reply !== NO_REPLY) {
      const head = Buffer.alloc(16);
      head.writeUInt32LE(16 + reply.body.length, 0);
      head.writeInt32LE(reply.error, 4);
      head.writeBigUInt64LE(unique, 8);
      try {
        fs.writeSync(dev, reply.error === 0 ? Buffer.concat([head, reply.body]) : head);
      } catch {
        // The request was interrupted meanwhile: the kernel no longer wants the answer.
      }
    }
    if (opcode === OP.DESTROY) process.exit(0);
    serve();
  });
}
serve();
process.stdout.write("mounted\n");
