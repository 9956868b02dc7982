import type { DatabaseSync } from "node:sqlite";

/**
 * The tables of Plex's `com.plexapp.plugins.library.db` that autoscan reads, in their real shapes (column names,
 * Plex's `dt_integer(8)` types, its index names; integrations.md §3.3), plus the pieces only Plex's own SQLite
 * understands, so tests meet the same schema a user's database has.
 */
export const PLEX_LIBRARY_SCHEMA = `
CREATE TABLE IF NOT EXISTS "library_sections" ("id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "library_id" integer,
  "name" varchar(255), "name_sort" varchar(255) COLLATE NOCASE, "section_type" integer, "language" varchar(255),
  "agent" varchar(255), "scanner" varchar(255), "user_thumb_url" varchar(255), "user_art_url" varchar(255),
  "user_theme_music_url" varchar(255), "public" boolean, "created_at" dt_integer(8), "updated_at" dt_integer(8),
  "scanned_at" dt_integer(8), "display_secondary_level" boolean, "user_fields" varchar(255), "query_xml" text,
  "query_type" integer, "uuid" varchar(255), "changed_at" integer(8) DEFAULT '0', "content_changed_at" integer(8) DEFAULT '0');
CREATE TABLE IF NOT EXISTS "section_locations" ("id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
  "library_section_id" integer, "root_path" varchar(255), "available" boolean DEFAULT 't', "scanned_at" dt_integer(8),
  "created_at" dt_integer(8), "updated_at" dt_integer(8));
CREATE INDEX "index_section_locations_on_library_section_id" ON "section_locations" ("library_section_id");
CREATE TABLE IF NOT EXISTS "directories" ("id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "library_section_id" integer,
  "parent_directory_id" integer, "path" varchar(255), "created_at" dt_integer(8), "updated_at" dt_integer(8),
  "deleted_at" dt_integer(8));
CREATE INDEX "index_directories_on_path" ON "directories" ("path");
CREATE INDEX "index_directories_on_parent_directory_id" ON "directories" ("parent_directory_id");
CREATE TABLE IF NOT EXISTS "metadata_items" ("id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "library_section_id" integer,
  "parent_id" integer, "metadata_type" integer, "guid" varchar(255), "media_item_count" integer, "title" varchar(255),
  "title_sort" varchar(255) COLLATE NOCASE, "original_title" varchar(255), "studio" varchar(255), "rating" float,
  "rating_count" integer, "tagline" varchar(255), "summary" text, "trivia" text, "quotes" text,
  "content_rating" varchar(255), "content_rating_age" integer, "index" integer, "absolute_index" integer,
  "duration" integer, "user_thumb_url" varchar(255), "user_art_url" varchar(255), "user_banner_url" varchar(255),
  "user_music_url" varchar(255), "user_fields" varchar(255), "tags_genre" varchar(255), "tags_collection" varchar(255),
  "tags_director" varchar(255), "tags_writer" varchar(255), "tags_star" varchar(255),
  "originally_available_at" dt_integer(8), "available_at" dt_integer(8), "expires_at" dt_integer(8),
  "refreshed_at" dt_integer(8), "year" integer, "added_at" dt_integer(8), "created_at" dt_integer(8),
  "updated_at" dt_integer(8), "deleted_at" dt_integer(8), "tags_country" varchar(255), "extra_data" varchar(255),
  "hash" varchar(255), 'audience_rating' float, 'changed_at' integer(8) default '0',
  'resources_changed_at' integer(8) default '0', 'remote' integer, 'edition_title' varchar(255));
CREATE INDEX "index_metadata_items_on_library_section_id" ON "metadata_items" ("library_section_id");
CREATE INDEX "index_metadata_items_on_parent_id" ON "metadata_items" ("parent_id");
CREATE INDEX "index_metadata_items_on_title" ON "metadata_items" ("title");
CREATE INDEX "index_metadata_items_on_guid" ON "metadata_items" ("guid");
CREATE INDEX "index_metadata_items_on_deleted_at" ON "metadata_items" ("deleted_at");
CREATE INDEX "index_metadata_items_on_added_at" ON "metadata_items" ("added_at");
CREATE TABLE IF NOT EXISTS "media_items" ("id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "library_section_id" integer,
  "section_location_id" integer, "metadata_item_id" integer, "type_id" integer, "width" integer, "height" integer,
  "size" integer(8), "duration" integer, "bitrate" integer, "container" varchar(255), "video_codec" varchar(255),
  "audio_codec" varchar(255), "display_aspect_ratio" float, "frames_per_second" float, "audio_channels" integer,
  "interlaced" boolean, "source" varchar(255), "hints" varchar(255), "display_offset" integer, "settings" varchar(255),
  "created_at" dt_integer(8), "updated_at" dt_integer(8), "optimized_for_streaming" boolean, "deleted_at" dt_integer(8),
  "media_analysis_version" integer DEFAULT 0, "sample_aspect_ratio" float, "extra_data" varchar(255),
  'proxy_type' integer, 'channel_id' integer, 'begins_at' dt_integer(8), 'ends_at' dt_integer(8), 'color_trc' varchar(255));
CREATE INDEX "index_media_items_on_library_section_id" ON "media_items" ("library_section_id");
CREATE INDEX "index_media_items_on_metadata_item_id" ON "media_items" ("metadata_item_id");
CREATE INDEX "index_media_items_on_deleted_at" ON "media_items" ("deleted_at");
CREATE TABLE IF NOT EXISTS "media_parts" ("id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "media_item_id" integer,
  "directory_id" integer, "hash" varchar(255), "open_subtitle_hash" varchar(255), "file" varchar(255), "index" integer,
  "size" integer(8), "duration" integer, "created_at" dt_integer(8), "updated_at" dt_integer(8),
  "deleted_at" dt_integer(8), "extra_data" varchar(255));
CREATE INDEX "index_media_parts_on_directory_id" ON "media_parts" ("directory_id");
CREATE INDEX "index_media_parts_on_media_item_id" ON "media_parts" ("media_item_id");
CREATE INDEX "index_media_parts_on_hash" ON "media_parts" ("hash");
CREATE INDEX "index_media_parts_on_file" ON "media_parts" ("file");
CREATE INDEX "index_media_parts_on_deleted_at" ON "media_parts" ("deleted_at");
CREATE INDEX "index_media_parts_on_size" ON "media_parts" ("size");
CREATE VIRTUAL TABLE "fts4_metadata_titles_icu" USING fts4(content='metadata_items', title, title_sort, original_title, tokenize=simple);
CREATE TRIGGER fts4_metadata_titles_before_update_icu BEFORE UPDATE ON metadata_items BEGIN
  DELETE FROM fts4_metadata_titles_icu WHERE docid=old.rowid; END;
CREATE TRIGGER fts4_metadata_titles_after_insert_icu AFTER INSERT ON metadata_items BEGIN
  INSERT INTO fts4_metadata_titles_icu(docid, title, title_sort, original_title)
  VALUES(new.rowid, new.title, new.title_sort, new.original_title); END;
CREATE INDEX "index_title_sort_icu" ON "metadata_items" ("title_sort" COLLATE NOCASE);
`;

/**
 * Turns the stand-ins into what Plex declares: its ICU tokenizer (`tokenize=collating …`) on the FTS4 table and its
 * `icu_root` collation on the title index. No SQLite outside Plex has either, so afterwards — as on a user's copy —
 * writes to `metadata_items` fail while reads of the plain tables work. Done last: the builder must write first.
 */
export function applyPlexOnlySchema(db: DatabaseSync): void {
  db.enableDefensive(false);
  db.exec("PRAGMA writable_schema=ON");
  db.exec(`UPDATE sqlite_master
    SET sql = replace(sql, 'tokenize=simple', 'tokenize=collating ''root@colStrength=primary;colAlternate=shifted''')
    WHERE name = 'fts4_metadata_titles_icu'`);
  db.exec(`UPDATE sqlite_master SET sql = replace(sql, 'COLLATE NOCASE)', 'COLLATE icu_root)')
    WHERE name = 'index_title_sort_icu'`);
  db.exec("PRAGMA writable_schema=OFF");
  db.enableDefensive(true);
}

/** Plex's `section_type` values. */
export const SECTION_TYPE = { movie: 1, show: 2, artist: 8, photo: 13 } as const;
/** Plex's `metadata_type` values. */
export const METADATA_TYPE = { movie: 1, show: 2, season: 3, episode: 4, artist: 8, album: 9, track: 10 } as const;
