import { describe, expect, it } from "vitest";
import { unescapeShellWord } from "./unescape-shell-word.ts";

describe("unescapeShellWord", () => {
  it.each([
    // plex_autoscan's defaults, written for `bash -c`
    ["/usr/lib/plexmediaserver/Plex\\ Media\\ Scanner", "/usr/lib/plexmediaserver/Plex Media Scanner"],
    ["/var/lib/plexmediaserver/Library/Application\\ Support", "/var/lib/plexmediaserver/Library/Application Support"],
    ['"/usr/lib/plexmediaserver/Plex Media Scanner"', "/usr/lib/plexmediaserver/Plex Media Scanner"],
    ["'/usr/lib/plexmediaserver/Plex Media Scanner'", "/usr/lib/plexmediaserver/Plex Media Scanner"],
    ['"/a/\\"quoted\\" \\$HOME"', '/a/"quoted" $HOME'],
    ["'/it'\\''s'", "/it's"],
    // already plain: kept, spaces and all; nothing is expanded
    ["/usr/lib/plexmediaserver/Plex Media Scanner", "/usr/lib/plexmediaserver/Plex Media Scanner"],
    ["$HOME/plex", "$HOME/plex"],
    // Windows paths are not shell syntax
    ["C:\\Program Files (x86)\\Plex\\Plex Media Server\\Plex Media Scanner.exe", "C:\\Program Files (x86)\\Plex\\Plex Media Server\\Plex Media Scanner.exe"],
    // an unbalanced quote was never shell syntax
    ["/odd/it's", "/odd/it's"],
  ])("%s", (raw, expected) => {
    expect(unescapeShellWord(raw)).toBe(expected);
  });
});
