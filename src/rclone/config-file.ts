/**
 * rclone.conf as rclone writes it: `[name]` sections of `key = value` lines, `#` and `;` comments. A value may
 * contain `=` (the token is JSON), so a line splits at its first `=` only. autoscan reads this file and never
 * writes it: rclone owns it.
 */
export interface RcloneConfigFile {
  /** Section names in file order, with their keys. */
  readonly sections: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** True when the file is rclone's encrypted form (`RCLONE_ENCRYPT_V0:`), which autoscan cannot read. */
  readonly encrypted: boolean;
}

export function parseRcloneConfig(text: string): RcloneConfigFile {
  const sections = new Map<string, Map<string, string>>();
  let current: Map<string, string> | undefined;
  for (const rawLine of text.replace(/^\uFEFF/, "").split(/\r?\n/)) {
    const line = rawLine.trim();
    if (line.startsWith("RCLONE_ENCRYPT_V")) return { sections, encrypted: true };
    if (!line || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header?.[1] !== undefined) {
      current = new Map();
      sections.set(header[1].trim(), current);
      continue;
    }
    const cut = line.indexOf("=");
    if (cut <= 0 || !current) continue;
    current.set(line.slice(0, cut).trim().toLowerCase(), line.slice(cut + 1).trim());
  }
  return { sections, encrypted: false };
}
