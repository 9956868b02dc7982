import { chmod, mkdir, mkdtemp, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { createLibraryFixture } from "../plex-library-db.ts";

/**
 * A Plex data dir on the host, to bind into a fake Plex container, holding a real-shaped library database with the
 * sections Movies (1, /data/Movies) and TV Shows (2, /data/TV). `databaseParent` is where the image keeps
 * `Plug-in Support/` under the data dir: "Library/Application Support/Plex Media Server" (pms-docker, linuxserver)
 * or "" (hotio, whose data dir is /config itself).
 */
export async function createLibraryDir(root: string, databaseParent: string): Promise<string> {
  const dir = await mkdtemp(join(root, "config-"));
  const databases = join(dir, databaseParent, "Plug-in Support", "Databases");
  await mkdir(databases, { recursive: true });
  const library = createLibraryFixture(join(databases, "com.plexapp.plugins.library.db"));
  library.addSection({ name: "Movies", type: "movie", roots: ["/data/Movies"] });
  library.addSection({ name: "TV Shows", type: "show", roots: ["/data/TV"] });
  library.seal();
  library.close();
  await openUp(dir);
  return dir;
}

/** The container's users (plex, abc, hotio) read it, and SQLite may add its -shm file beside the database. */
async function openUp(path: string): Promise<void> {
  const info = await stat(path);
  await chmod(path, info.isDirectory() ? 0o777 : 0o666);
  if (info.isDirectory()) for (const entry of await readdir(path)) await openUp(join(path, entry));
}
