import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The memory figures a user reads: the README (Docker and systemd) says the idle RSS and what `docker stats` shows,
 * docs/performance.md says both with the measurement behind them. They must agree with each other and with that
 * measurement (`VmRSS`, `RssAnon` in kB), so a figure changed in one place and not the other fails here.
 */
const root = join(import.meta.dirname, "..");
const readme = readFileSync(join(root, "README.md"), "utf8");
const performance = readFileSync(join(root, "docs", "performance.md"), "utf8");
const memory = performance.slice(performance.indexOf("\n## Memory\n"), performance.indexOf("\n## ", performance.indexOf("\n## Memory\n") + 5));

const numbers = (text: string, pattern: RegExp): number[] => [...text.matchAll(pattern)].map((match) => Number((match[1] ?? "").replace(/,/g, "")));

describe("the memory figures in the README and docs/performance.md", () => {
  it("the README's idle RSS and docker stats figures are the ones docs/performance.md measured", () => {
    const readmeRss = numbers(readme, /idle RSS ~(\d+) MB, which `docker stats` shows as ~\d+ MiB/g);
    const readmeStats = numbers(readme, /idle RSS ~\d+ MB, which `docker stats` shows as ~(\d+) MiB/g);
    expect(readmeRss.length, "the README's Docker and systemd sections each state them").toBeGreaterThanOrEqual(2);
    const [docsRss] = numbers(memory, /Idle, the service's RSS is ~(\d+) MB/g);
    const [docsStats] = numbers(memory, /`docker stats` shows the same idle container at ~(\d+) MiB/g);
    const [benchRss] = numbers(performance, /idle RSS ~(\d+) MB \(`bench\/start\.ts`/g);
    expect(docsRss).toBeDefined();
    expect(new Set([...readmeRss, docsRss, benchRss])).toEqual(new Set([docsRss]));
    expect(new Set([...readmeStats, docsStats])).toEqual(new Set([docsStats]));
  });

  it("the stated figures fit the measurement docs/performance.md gives (VmRSS, RssAnon)", () => {
    const [rss] = numbers(memory, /Idle, the service's RSS is ~(\d+) MB/g);
    const [stats] = numbers(memory, /shows the same idle container at ~(\d+) MiB/g);
    const [vmRss] = numbers(memory, /`VmRSS` ([\d,]+) kB/g);
    const [anon] = numbers(memory, /`RssAnon` ([\d,]+) kB/g);
    const [file] = numbers(memory, /`RssFile` ([\d,]+) kB/g);
    if (rss === undefined || stats === undefined || vmRss === undefined || anon === undefined || file === undefined) throw new Error("docs/performance.md's Memory section lost a figure");
    expect(Math.abs(rss * 1024 - vmRss) / vmRss, "the RSS figure is the measured VmRSS (within 3 %)").toBeLessThan(0.03);
    expect(anon + file, "RssAnon + RssFile make up VmRSS").toBeLessThanOrEqual(vmRss);
    expect(anon + file).toBeGreaterThan(vmRss * 0.97);
    // docker stats counts the anonymous part and the cache this container read itself: at least RssAnon, well below VmRSS.
    expect(stats * 1024).toBeGreaterThanOrEqual(anon);
    expect(stats * 1024).toBeLessThan(vmRss);
  });
});

describe("the Node option: explained once, where Docker and systemd users both find it", () => {
  const section = (text: string, heading: string): string => {
    const start = text.indexOf(`\n${heading}\n`);
    expect(start, heading).toBeGreaterThanOrEqual(0);
    const level = heading.split(" ")[0] ?? "##";
    const next = text.slice(start + heading.length + 2).search(new RegExp(`\n#{2,${level.length}} `));
    return next < 0 ? text.slice(start) : text.slice(start, start + heading.length + 2 + next);
  };
  const operations = readFileSync(join(root, "docs", "operations.md"), "utf8");
  /** Node's own options (`--…`) before the entry point, as each way of running the service writes them. */
  const optionsIn = (line: string | undefined): string[] => (line ?? "").match(/--[a-z-]+=\S+/g) ?? [];

  it("the option the docs explain is the one the image, the unit and npm start run", () => {
    const image = readFileSync(join(root, "docker", "autoscan.sh"), "utf8").split("\n").find((line) => line.startsWith("set -- --"));
    const unit = readFileSync(join(root, "deploy", "autoscan.service"), "utf8").split("\n").find((line) => line.startsWith("ExecStart="));
    const start = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts.start;
    const explained = optionsIn(/run `node (--[^`]+) dist\/cli\/main\.js`/.exec(memory.replace(/\s+/g, " "))?.[1]);
    expect(explained).toEqual(["--max-semi-space-size=4"]);
    for (const used of [image, unit, start]) expect(optionsIn(used)).toEqual(explained);
  });

  it("README's Docker and systemd sections and operations.md's both link to it; only docs/performance.md explains it", () => {
    for (const [name, text] of [
      ["README Docker", section(readme, "### Docker")],
      ["README systemd", section(readme, "### Install without Docker (systemd)")],
      ["operations.md Docker", section(operations, "## Docker")],
      ["operations.md systemd", section(operations, "## Install without Docker (systemd)")],
    ] as const) {
      expect(text, name).toMatch(/\]\((docs\/)?performance\.md#memory\)/);
    }
    // The why (the young generation's size) is said in one place.
    for (const text of [readme, operations]) expect(text).not.toContain("young generation");
    expect(memory).toContain("young generation");
  });
});
