import { DatabaseSync } from "node:sqlite";
import { applyPlexOnlySchema, METADATA_TYPE, PLEX_LIBRARY_SCHEMA, SECTION_TYPE } from "./plex-library-schema.ts";

/**
 * Builds a real SQLite file shaped like Plex's library database, in WAL mode as Plex keeps it, with the rows Plex
 * writes for a movie or an episode (metadata item → media item → media part). `sealed()` adds the Plex-only schema
 * pieces (ICU tokenizer, icu_root collation); after that only `media_parts` rows can still be written, as from any
 * SQLite outside Plex.
 */
export interface LibraryFixture {
  readonly path: string;
  addSection(input: { name: string; type: keyof typeof SECTION_TYPE; roots: readonly string[] }): string;
  addMovie(input: { sectionId: string; title: string; file: string; size: number; deleted?: boolean }): MovieRows;
  addEpisode(input: {
    sectionId: string;
    show: string;
    season: number;
    episode: number;
    file: string;
    size: number;
  }): EpisodeRows;
  /** Marks a file's part (and its item) deleted, as Plex does when a scan finds it gone: it is then in the trash. */
  markDeleted(file: string): void;
  /** Adds a part to an existing media item (what Plex writes when it finds a second file for an item). */
  addPart(input: { mediaItemId: string; file: string; size: number }): void;
  /** Adds the Plex-only schema pieces and reopens the writer. */
  seal(): void;
  /** The open writing connection (it keeps the WAL from being checkpointed away, like a running Plex). */
  readonly writer: DatabaseSync;
  close(): void;
}

export interface MovieRows {
  readonly itemId: string;
  readonly mediaItemId: string;
}
export interface EpisodeRows extends MovieRows {
  readonly showId: string;
  readonly seasonId: string;
}

const NOW = 1_767_225_600; // 2026-01-01, seconds, as Plex stores dt_integer(8)

export function createLibraryFixture(path: string): LibraryFixture {
  let db = new DatabaseSync(path);
  db.exec("PRAGMA journal_mode=WAL");
  db.exec(PLEX_LIBRARY_SCHEMA);
  const shows = new Map<string, string>();
  const seasons = new Map<string, string>();

  const insert = (sql: string, ...values: (string | number | null)[]): string =>
    String(db.prepare(sql).run(...values).lastInsertRowid);

  function metadata(sectionId: string, type: number, title: string, parentId: string | null, index: number | null) {
    return insert(
      `INSERT INTO metadata_items (library_section_id, parent_id, metadata_type, guid, title, title_sort, "index",
         summary, added_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      sectionId, parentId, type, `plex://${type}/${title}`, title, title, index, `Summary of ${title}`, NOW, NOW, NOW,
    );
  }

  function media(sectionId: string, itemId: string, file: string, size: number): string {
    const mediaItemId = insert(
      `INSERT INTO media_items (library_section_id, metadata_item_id, size, container, created_at, updated_at)
       VALUES (?, ?, ?, 'mkv', ?, ?)`,
      sectionId, itemId, size, NOW, NOW,
    );
    addPartRow(mediaItemId, file, size);
    return mediaItemId;
  }

  function addPartRow(mediaItemId: string, file: string, size: number): void {
    insert(
      `INSERT INTO media_parts (media_item_id, file, size, hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
      mediaItemId, file, size, `hash-${file.length}-${size}`, NOW, NOW,
    );
  }

  return {
    path,
    get writer() {
      return db;
    },
    addSection({ name, type, roots }) {
      const id = insert(
        `INSERT INTO library_sections (name, name_sort, section_type, language, agent, scanner, uuid, created_at, updated_at)
         VALUES (?, ?, ?, 'en-US', 'tv.plex.agents.movie', 'Plex Movie', ?, ?, ?)`,
        name, name, SECTION_TYPE[type], `uuid-${name}`, NOW, NOW,
      );
      for (const root of roots) {
        insert(`INSERT INTO section_locations (library_section_id, root_path, available, created_at) VALUES (?, ?, 1, ?)`,
          id, root, NOW);
      }
      return id;
    },
    addMovie({ sectionId, title, file, size, deleted }) {
      const itemId = metadata(sectionId, METADATA_TYPE.movie, title, null, null);
      const mediaItemId = media(sectionId, itemId, file, size);
      if (deleted) this.markDeleted(file);
      return { itemId, mediaItemId };
    },
    addEpisode({ sectionId, show, season, episode, file, size }) {
      const showKey = `${sectionId}/${show}`;
      let showId = shows.get(showKey);
      if (!showId) shows.set(showKey, (showId = metadata(sectionId, METADATA_TYPE.show, show, null, null)));
      const seasonKey = `${showKey}/${season}`;
      let seasonId = seasons.get(seasonKey);
      if (!seasonId) {
        seasonId = metadata(sectionId, METADATA_TYPE.season, `Season ${season}`, showId, season);
        seasons.set(seasonKey, seasonId);
      }
      const itemId = metadata(sectionId, METADATA_TYPE.episode, `${show} S${season}E${episode}`, seasonId, episode);
      return { showId, seasonId, itemId, mediaItemId: media(sectionId, itemId, file, size) };
    },
    addPart({ mediaItemId, file, size }) {
      addPartRow(mediaItemId, file, size);
    },
    markDeleted(file) {
      db.prepare("UPDATE media_parts SET deleted_at = ? WHERE file = ?").run(NOW, file);
      db.prepare(
        `UPDATE metadata_items SET deleted_at = ? WHERE id IN (SELECT mi.metadata_item_id FROM media_items mi
           JOIN media_parts mp ON mp.media_item_id = mi.id WHERE mp.file = ?)`,
      ).run(NOW, file);
    },
    seal() {
      applyPlexOnlySchema(db);
      db.close();
      db = new DatabaseSync(path);
    },
    close() {
      db.close();
    },
  };
}
