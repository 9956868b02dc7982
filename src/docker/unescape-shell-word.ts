/**
 * plex_autoscan pasted `PLEX_SCANNER`, `PLEX_SUPPORT_DIR` … raw into a `bash -c` string, so configs carry
 * shell-escaped values: `/usr/lib/plexmediaserver/Plex\ Media\ Scanner`, or quoted ones. We pass argv without a
 * shell, so undo the quoting once: backslash escapes, '…' and "…" (where only \" \\ \$ \` and a newline are escapes).
 * Nothing is expanded (`$HOME` stays literal), unquoted spaces are kept, and Windows paths (`C:\…`) are left alone.
 */
export function unescapeShellWord(value: string): string {
  if (/^[A-Za-z]:[\\/]/.test(value) || value.startsWith("\\\\")) return value;
  if (!/[\\'"]/.test(value)) return value;
  let out = "";
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i] as string;
    const next = value[i + 1];
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      else out += ch;
    } else if (quote === '"') {
      if (ch === '"') quote = undefined;
      else if (ch === "\\" && next !== undefined && '"\\$`\n'.includes(next)) {
        out += next === "\n" ? "" : next;
        i++;
      } else out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
    } else if (ch === "\\" && next !== undefined) {
      out += next === "\n" ? "" : next;
      i++;
    } else out += ch;
  }
  // An unbalanced quote means it was never shell syntax: keep the value as written.
  return quote === undefined ? out : value;
}
