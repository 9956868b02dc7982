import { closeSync, existsSync, fstatSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/**
 * A log file rotated by size, like plex_autoscan's (2 MiB × 5 by default): `autoscan.log` → `autoscan.log.1` … The
 * writes are synchronous so that nothing logged before a crash is lost; log volume here is a few lines per scan.
 */
export interface RotatingFileOptions {
  readonly path: string;
  readonly maxBytes: number;
  readonly maxFiles: number;
}

export interface RotatingFile {
  write(line: string): void;
  close(): void;
}

export function openRotatingFile(options: RotatingFileOptions): RotatingFile {
  mkdirSync(dirname(options.path), { recursive: true });
  let fd = openSync(options.path, "a", 0o640);
  let size = fstatSync(fd).size;

  function rotate(): void {
    closeSync(fd);
    const last = `${options.path}.${options.maxFiles}`;
    if (existsSync(last)) rmSync(last);
    for (let n = options.maxFiles - 1; n >= 1; n--) {
      const from = `${options.path}.${n}`;
      if (existsSync(from)) renameSync(from, `${options.path}.${n + 1}`);
    }
    if (options.maxFiles > 0) renameSync(options.path, `${options.path}.1`);
    else rmSync(options.path, { force: true });
    fd = openSync(options.path, "a", 0o640);
    size = 0;
  }

  return {
    write(line) {
      const bytes = Buffer.byteLength(line);
      if (size > 0 && size + bytes > options.maxBytes) rotate();
      writeSync(fd, line);
      size += bytes;
    },
    close() {
      closeSync(fd);
    },
  };
}
