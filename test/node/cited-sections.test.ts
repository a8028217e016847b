/**
 * Every section a comment cites exists: a comment that says where the
 * contract lives (`ARCHITECTURE.md, "Storage"`, `docs/rules.md, "Changed
 * definitions"`) sends a reader to a heading of that file, never to one
 * renamed or never written.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const SOURCES = ["src", "test", "bench", "demo", "support", "scripts"];

function sourceFiles(): string[] {
  return SOURCES.flatMap((dir) =>
    readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
      .filter((file) => /\.(?:ts|mjs|js)$/.test(file) && !file.includes("node_modules"))
      .map((file) => join(dir, file)),
  );
}

/** A file's text with comment markers gone and lines joined: a citation may wrap. */
const joined = (source: string) =>
  source
    .split("\n")
    .map((line) => line.replace(/^\s*(?:\/\/+|\/?\*+\/?)\s?/, "").trim())
    .join(" ");

/** `FILE, "A"` (and `"B"` after it: `, "B"` or `and "B"`), where FILE is one of the project's documents. */
const CITATION =
  /((?:ARCHITECTURE|SECURITY|README)\.md|docs\/[a-z-]+\.md),\s+("[^"]+"(?:(?:,\s*|\s+and\s+)"[^"]+")*)/g;

function citations(source: string): Array<{ file: string; section: string }> {
  return [...joined(source).matchAll(CITATION)].flatMap(([, file, sections]) =>
    [...(sections ?? "").matchAll(/"([^"]+)"/g)].map(([, section]) => ({
      file: file as string,
      section: section as string,
    })),
  );
}

/** The headings of a Markdown file, as written and without backticks. */
function headings(file: string): Set<string> {
  const text = readFileSync(join(ROOT, file), "utf8");
  return new Set(
    text
      .split("\n")
      .filter((line) => /^#{1,6}\s/.test(line))
      .flatMap((line) => {
        const heading = line.replace(/^#+\s+/, "").trim();
        return [heading, heading.replaceAll("`", "")];
      }),
  );
}

describe("sections cited in comments", () => {
  it("are read from wrapped comments", () => {
    // Written so that this file cites nothing itself.
    const docs = "docs";
    expect(citations(` * pins (${docs}/rules.md, "Changed\n * definitions") and`)).toEqual([
      { file: "docs/rules.md", section: "Changed definitions" },
    ]);
    expect(citations(`// (${docs}/names.md, "Tool names" and "Profiles")`)).toHaveLength(2);
  });

  it("exist as headings of the file they name", () => {
    const missing: string[] = [];
    let count = 0;
    for (const source of sourceFiles()) {
      for (const { file, section } of citations(readFileSync(join(ROOT, source), "utf8"))) {
        count++;
        if (!existsSync(join(ROOT, file)) || !headings(file).has(section))
          missing.push(`${source}: ${file}, "${section}"`);
      }
    }
    expect(missing).toEqual([]);
    // Not vacuous: the comments cite a dozen sections and more.
    expect(count).toBeGreaterThan(10);
  });
});
