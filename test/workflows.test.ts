import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

/**
 * The GitHub Actions workflows (.github/workflows/): each one passes `action-validator` (the devDependency
 * @action-validator/cli, WebAssembly inside the npm package, so it runs offline), and a broken copy is refused, so that
 * `npm test` (and with it .ci/run) stops a workflow GitHub would reject. Then what the release workflow relies on in
 * the Dockerfile: the build arguments it passes are declared there, and the script that adds --start-interval to the
 * published image's HEALTHCHECK edits exactly that line.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const WORKFLOWS = join(ROOT, ".github", "workflows");
const VALIDATOR = join(ROOT, "node_modules", ".bin", "action-validator");
const START_INTERVAL_SCRIPT = join(ROOT, ".github", "healthcheck-start-interval.sh");
const DOCKERFILE = join(ROOT, "Dockerfile");

const scratch = mkdtempSync(join(tmpdir(), "autoscan-workflows-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The validator's verdict on one file: its exit code and what it printed (JSON errors on stderr). */
function validate(path: string): { readonly status: number | null; readonly output: string } {
  const result = spawnSync(process.execPath, [VALIDATOR, path], { encoding: "utf8", timeout: 15_000 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** A copy of a workflow with one edit, in the scratch folder (the name keeps ".yml", which selects workflow rules). */
function brokenCopy(name: string, edit: (text: string) => string): string {
  const original = readFileSync(join(WORKFLOWS, name), "utf8");
  const broken = edit(original);
  expect(broken, "the edit must change the file").not.toBe(original);
  const path = join(scratch, `broken-${name}`);
  writeFileSync(path, broken);
  return path;
}

const workflowFiles = readdirSync(WORKFLOWS).filter((name) => /\.ya?ml$/.test(name)).sort();

describe("GitHub Actions workflows, checked by action-validator", () => {
  it("has the CI and the release workflow", () => {
    expect(workflowFiles).toEqual(expect.arrayContaining(["ci.yml", "release.yml"]));
  });

  it.each(workflowFiles)("%s is valid", (name) => {
    const { status, output } = validate(join(WORKFLOWS, name));
    expect(output).toBe("");
    expect(status).toBe(0);
  });

  it.each([
    {
      what: "a misspelt key",
      file: "ci.yml",
      edit: (text: string) => text.replace("runs-on:", "runs_on:"),
      says: "Additional property 'runs_on' is not allowed",
    },
    {
      what: "a job that needs one that does not exist",
      file: "release.yml",
      edit: (text: string) => text.replace("needs: ci", "needs: tests"),
      says: "unresolved job tests",
    },
    {
      what: "YAML that does not parse",
      file: "release.yml",
      edit: (text: string) => text.replace("jobs:\n", "jobs: [\n"),
      says: "Parse Error",
    },
  ])("refuses a copy with $what", ({ file, edit, says }) => {
    const { status, output } = validate(brokenCopy(file, edit));
    expect(status).not.toBe(0);
    expect(output).toContain(says);
  });
});

describe("what the release workflow relies on", () => {
  const release = readFileSync(join(WORKFLOWS, "release.yml"), "utf8");
  const dockerfile = readFileSync(DOCKERFILE, "utf8");

  it("runs the whole CI first, then pushes linux/amd64 and linux/arm64 images on a version tag", () => {
    expect(release).toMatch(/^ {2}push:\n {4}tags: \["v\*"\]$/m);
    expect(release).toMatch(/^ {4}uses: \.\/\.github\/workflows\/ci\.yml$/m);
    expect(release).toMatch(/^ {4}needs: ci$/m);
    expect(release).toMatch(/platforms: linux\/amd64,linux\/arm64$/m);
    expect(release).toMatch(/push: true$/m);
    // The published name is ghcr.io/<owner in lower case>/autoscan; the compose file's default is one such name.
    expect(release).toContain('IMAGE=ghcr.io/${GITHUB_REPOSITORY_OWNER,,}/autoscan"');
    const compose = readFileSync(join(ROOT, "docker-compose.yml"), "utf8");
    expect(compose).toMatch(/image: "\$\{AUTOSCAN_IMAGE:-ghcr\.io\/[a-z0-9-]+\/autoscan:latest\}"/);
  });

  it("passes only build arguments the Dockerfile's final stage declares", () => {
    const block = /build-args: \|\n((?: {12}.+\n)+)/.exec(release)?.[1] ?? "";
    const passed = [...block.matchAll(/^ +([A-Z_]+)=/gm)].map((match) => match[1]);
    expect(passed).toEqual(["VERSION", "REVISION", "SOURCE"]);
    const finalStage = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));
    for (const name of passed) expect(finalStage).toMatch(new RegExp(`^ARG ${name}=`, "m"));
    for (const label of ["title", "description", "licenses", "source", "version", "revision"]) {
      expect(finalStage).toContain(`org.opencontainers.image.${label}=`);
    }
  });

  it("adds --start-interval=1s to the one HEALTHCHECK of the published image, and nothing else", () => {
    // Not in the Dockerfile itself: Docker Engines before 25 cannot build it then (the classic builder refuses it).
    expect(dockerfile).not.toMatch(/^HEALTHCHECK .*--start-interval/m);
    expect(release).toContain("run: bash .github/healthcheck-start-interval.sh Dockerfile");
    const copy = join(scratch, "Dockerfile");
    copyFileSync(DOCKERFILE, copy);
    const edited = spawnSync("bash", [START_INTERVAL_SCRIPT, copy], { encoding: "utf8", timeout: 10_000 });
    expect(edited.stderr).toBe("");
    expect(edited.status).toBe(0);
    const before = dockerfile.split("\n");
    const after = readFileSync(copy, "utf8").split("\n");
    const changed = after.flatMap((line, index) => (line === before[index] ? [] : [[before[index], line]]));
    expect(after).toHaveLength(before.length);
    expect(changed).toHaveLength(1);
    const [[oldLine, newLine] = []] = changed;
    expect(oldLine).toMatch(/^HEALTHCHECK --interval=30s .*--start-period=30s /);
    expect(newLine).toBe(oldLine?.replace("HEALTHCHECK ", "HEALTHCHECK --start-interval=1s "));

    // Run twice (or on a Dockerfile that gained the flag itself), it refuses instead of adding a second one.
    const again = spawnSync("bash", [START_INTERVAL_SCRIPT, copy], { encoding: "utf8", timeout: 10_000 });
    expect(again.status).not.toBe(0);
    expect(again.stderr).toContain("already has --start-interval");
  });
});
