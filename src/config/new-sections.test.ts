import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { anchorsOf } from "../../test/support/markdown-anchors.ts";
import { NEW_SECTIONS } from "./new-sections.ts";
import { ConfigSchema } from "./schema.ts";

const ROOT = join(import.meta.dirname, "..", "..");

describe("the new sections config upgrade names", () => {
  it.each(NEW_SECTIONS.map((section) => [section.key, section.docs]))("%s points at a heading that exists (%s)", (_key, docs) => {
    const [file = "", anchor = ""] = docs.split("#");
    expect(anchorsOf(readFileSync(join(ROOT, file), "utf8"))).toContain(anchor);
  });

  it("are keys of the config", () => {
    for (const section of NEW_SECTIONS) expect(Object.keys(ConfigSchema.entries), section.key).toContain(section.key);
  });
});
