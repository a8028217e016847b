/**
 * The documents a user reads first hold together: README stays short (what
 * the proxy is, a quickstart, a tenant, where each topic lives; the tables
 * live once, in docs/), and every relative link in README, SECURITY.md,
 * ARCHITECTURE.md and docs/ leads to a file that exists and, with a
 * `#fragment`, to a heading of it, as GitHub names headings. The commands they give
 * (`npm run NAME`, `npx PACKAGE`, in them and in wrangler.toml's comments) are the
 * repository's own, a `wrangler kv` command on keys says whose keys it reads, and the
 * Node.js version they ask for is package.json's `engines`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const README_MAX_BYTES = 12 * 1024;

const DOCUMENTS = [
  "README.md",
  "SECURITY.md",
  "ARCHITECTURE.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((file) => file.endsWith(".md"))
    .map((file) => join("docs", file)),
];

/** A Markdown text without its fenced code blocks and code spans, where `[a](b)` is no link. */
const prose = (text: string) =>
  text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, "").replace(/`[^`\n]*`/g, "");

/** The anchors GitHub gives a file's headings: lower case, punctuation gone, spaces as dashes, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, "").split("\n")) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The relative links of a document: `[text](target)`, where target is no URL with a scheme. */
function linksOf(text: string): string[] {
  return [...prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map(([, target]) => target as string)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** Why `target`, linked from `document`, leads nowhere; `undefined` when it leads somewhere. */
function brokenLink(document: string, target: string): string | undefined {
  const [path = "", fragment] = target.split("#");
  const file = path === "" ? join(ROOT, document) : join(ROOT, dirname(document), path);
  if (!existsSync(file)) return `${relative(ROOT, file)} does not exist`;
  if (fragment === undefined) return undefined;
  if (!statSync(file).isFile() || !file.endsWith(".md")) return `${target}: no headings to link to`;
  const anchors = anchorsOf(readFileSync(file, "utf8"));
  return anchors.has(decodeURIComponent(fragment))
    ? undefined
    : `${relative(ROOT, file)} has no heading #${fragment}`;
}

const packageJson = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  engines: { node: string };
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** Every document's text, and wrangler.toml's (its comments give commands too). */
const allText = () =>
  [...DOCUMENTS, "wrangler.toml"].map((file) => readFileSync(join(ROOT, file), "utf8")).join("\n");

type Version = [number, number, number];

/** A version's text (`22`, `22.12`, `22.12.0`) as numbers, the parts left out as 0. */
function versionOf(text: string): Version {
  const [major = Number.NaN, minor = 0, patch = 0] = text.split(".").map(Number);
  return [major, minor, patch];
}

const compare = (a: Version, b: Version) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/**
 * Whether `version` meets an `engines.node` range in the forms the lockfile's packages write
 * (`>=22.12.0`, `^20.19.0 || >=22.12.0`, `10.* || >= 12.*`, `*`); a form it cannot read does not.
 */
function meets(version: Version, range: string): boolean {
  return range.split("||").some((alternative) => {
    const text = alternative.trim().replaceAll(".*", "");
    if (text === "*") return true;
    const [, operator = "", bound = ""] = /^(>=|\^)?\s*(\d+(?:\.\d+){0,2})$/.exec(text) ?? [];
    if (bound === "") return false;
    const least = versionOf(bound);
    if (operator === ">=") return compare(version, least) >= 0;
    // `^X.Y.Z` and a bare `X` (or `X.*`): at least that, below the next major.
    return compare(version, least) >= 0 && version[0] === least[0];
  });
}

describe("README and docs/", () => {
  it("give only commands the repository has: its npm scripts, and npx of a package it pins", () => {
    const text = allText();
    const scripts = [...text.matchAll(/npm run ([a-z][\w:-]*)/g)].map(([, name]) => name as string);
    expect(scripts.length).toBeGreaterThan(50);
    expect([...new Set(scripts)].filter((name) => !(name in packageJson.scripts))).toEqual([]);
    const pinned = { ...packageJson.dependencies, ...packageJson.devDependencies };
    const npx = [...text.matchAll(/npx ([@a-z][\w@/.-]*)/g)].map(([, name]) => name as string);
    expect(npx.length).toBeGreaterThan(10);
    expect([...new Set(npx)].filter((name) => !(name in pinned))).toEqual([]);
  });

  it("say where each `wrangler kv` command on keys reads: a tenant's KV (--remote) or this machine's", () => {
    // Wrangler 4 reads and writes the storage `wrangler dev` keeps on this machine unless told
    // `--remote`: a command for a deployed tenant would find none of its keys, and say nothing.
    const commands = [...allText().matchAll(/wrangler kv (?:key|bulk) [^`\n]*/g)].map(
      ([command]) => command,
    );
    expect(commands.length).toBeGreaterThan(1);
    expect(commands.filter((command) => !/ --(?:remote|local)\b/.test(command))).toEqual([]);
  });

  it("say the Node.js version package.json's engines asks for", () => {
    const least = /^>=(\d+(?:\.\d+){0,2})$/.exec(packageJson.engines.node)?.[1];
    const said = [...allText().matchAll(/Node\.js (\d+(?:\.\d+){0,2}) or newer/g)].map(
      ([, version]) => version,
    );
    expect(said.length).toBeGreaterThan(0);
    expect(said.every((version) => version === least)).toBe(true);
  });

  it("ask for a Node.js every package npm installs takes, so that npm install on it warns of none", () => {
    // npm warns EBADENGINE (and with engine-strict, refuses) where the Node.js running it is below
    // a package's `engines`: the version README asks for must be one wrangler and the rest take.
    const least = versionOf(/^>=(\d+(?:\.\d+){0,2})$/.exec(packageJson.engines.node)?.[1] ?? "");
    const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
      packages: Record<string, { version?: string; engines?: { node?: string } }>;
    };
    const ranges = Object.entries(lock.packages).flatMap(([path, entry]) =>
      // Installed here: an optional package of another platform is skipped by npm, unread.
      path !== "" &&
      entry.engines?.node !== undefined &&
      existsSync(join(ROOT, path, "package.json"))
        ? [
            {
              name: `${path.replace(/^.*node_modules\//, "")}@${entry.version}`,
              range: entry.engines.node,
            },
          ]
        : [],
    );
    expect(ranges.length).toBeGreaterThan(50);
    expect(ranges.filter(({ range }) => !meets(least, range))).toEqual([]);
  });

  it("give `npm run tenant -- add` a name wrangler.toml has no section of, so it runs as written", () => {
    // The command writes no section the file has already: a walkthrough whose tenant is one of the
    // file's examples (acme, acme-broker) stops at its first step with "has [env.acme] already".
    const toml = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
    const sections = new Set([...toml.matchAll(/^\[env\.([\w-]+)\]$/gm)].map(([, name]) => name));
    expect(sections).toContain("acme");
    const documents = DOCUMENTS.map((file) => readFileSync(join(ROOT, file), "utf8")).join("\n");
    const named = [...documents.matchAll(/npm run tenant -- add ([a-z0-9-]+)/g)].map(
      ([, name]) => name,
    );
    expect(named.length).toBeGreaterThan(3);
    expect(named.filter((name) => sections.has(name ?? ""))).toEqual([]);
  });

  it("README is at most 12 KB", () => {
    expect(statSync(join(ROOT, "README.md")).size).toBeLessThanOrEqual(README_MAX_BYTES);
  });

  it("reads headings' anchors as GitHub writes them", () => {
    expect([
      ...anchorsOf(
        "# Limits and known gaps\n## `openai-strict`\n### What `hold` catches, and what it cannot\n## Logs\n## Logs",
      ),
    ]).toEqual([
      "limits-and-known-gaps",
      "openai-strict",
      "what-hold-catches-and-what-it-cannot",
      "logs",
      "logs-1",
    ]);
  });

  it("every relative link leads to a file, and to a heading of it", () => {
    const broken: string[] = [];
    let count = 0;
    for (const document of DOCUMENTS) {
      for (const target of linksOf(readFileSync(join(ROOT, document), "utf8"))) {
        count++;
        const why = brokenLink(document, target);
        if (why !== undefined) broken.push(`${document}: (${target}) ${why}`);
      }
    }
    expect(broken).toEqual([]);
    // Not vacuous: the documents link to each other a hundred times and more.
    expect(count).toBeGreaterThan(100);
  });
});
