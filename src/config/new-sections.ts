/**
 * The features autoscan adds to plex_autoscan's, each switched on by a key or section of its own that a working file
 * does without: `config upgrade` names the ones a file lacks (what each does, where it is documented) and never writes
 * them, because each needs values only the user knows (an app's URL and API key, a Discord webhook, a folder).
 */
export interface NewSection {
  readonly key: string;
  /** What it does, in a few words. */
  readonly what: string;
  /** Where it is documented: a file of the repository's docs/, with its heading's anchor. */
  readonly docs: string;
}

export const NEW_SECTIONS: readonly NewSection[] = [
  {
    key: "ARR",
    what: "your *arr apps: missed imports caught up from their history, a broken webhook noticed",
    docs: "docs/operations.md#catching-up-from-the-arr-history",
  },
  {
    key: "TARGETS",
    what: "more servers every folder goes to: Jellyfin, Emby, another Plex or autoscan",
    docs: "docs/operations.md#more-servers-jellyfin-emby-another-plex",
  },
  {
    key: "NOTIFY",
    what: "a message (Discord, ntfy, Apprise, a webhook) when a scan fails or a server goes down",
    docs: "docs/operations.md#notifications",
  },
  { key: "WATCH", what: "scans for files that no *arr app announced, by watching library folders", docs: "docs/operations.md#watching-library-folders" },
  { key: "SERVER_ANCHORS", what: "scans wait while a mount is missing or hangs, instead of failing", docs: "docs/operations.md#hung-mounts" },
  {
    key: "SERVER_DATABASE_URL",
    what: "the queue in PostgreSQL, shared by several instances",
    docs: "docs/several-instances.md#running-several-instances",
  },
];
