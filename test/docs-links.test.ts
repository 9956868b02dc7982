import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { anchorsOf } from "./support/markdown-anchors.ts";

/**
 * The README is the front door and `docs/` holds the rest: the README stays under 30 KB, and every link between them
 * reaches a file that exists and, after `#`, a heading in it (as GitHub names its anchors: lower case, punctuation
 * dropped, spaces as hyphens). A section moved or renamed without its links fails here.
 */
const ROOT = join(import.meta.dirname, "..");
const PAGES = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];

describe("README and docs/", () => {
  it("keeps the README under 30 KB", () => {
    expect(readFileSync(join(ROOT, "README.md")).length).toBeLessThanOrEqual(30_000);
  });

  it("links only to files that exist and headings they hold", () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      const text = readFileSync(join(ROOT, page), "utf8");
      for (const [, target = ""] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [path = "", fragment] = target.split("#");
        const file = path === "" ? page : normalize(join(dirname(page), path));
        if (!existsSync(join(ROOT, file))) broken.push(`${page}: ${target} (no such file)`);
        else if (fragment && file.endsWith(".md") && !anchorsOf(readFileSync(join(ROOT, file), "utf8")).has(fragment)) {
          broken.push(`${page}: ${target} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
