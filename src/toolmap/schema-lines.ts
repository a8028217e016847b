/**
 * The origin's input schemas in KV (`v2:<origin>:schemas:<i>`, stored-map.ts;
 * docs/tool-map.md): one line each, `<fingerprint>\t<schema as JSON>\n`, so a
 * call reads and parses its own tool's schema alone; and which lines a write
 * of the map keeps and adds. Pure: map-store.ts reads and writes them.
 *
 * A fingerprint is 32 bits (plan-listing.ts `schemaHash`), and two schemas
 * made to give one (an origin, or a caller whose values it writes into a
 * schema, finds them in seconds) have a line each. The map tells a tool's by
 * a second fingerprint of its text (`schemaCheck`, `StoredTool.check`),
 * taken only where several tools have one fingerprint and more than one
 * schema: of every schema, checks were a tenth of a 1,000-tool first listing.
 * A tool the map holds no check of (a fingerprint of one schema, or a map an
 * earlier version wrote) reads the first line of its fingerprint.
 */
import { fingerprint32 } from "../names/stable-hash";
import { holdsSchema } from "./listed-schema";
import type { ToolEntry } from "./plan-listing";
import type { StoredMap, StoredTool } from "./stored-map";

/** One schema line: JSON text never holds a raw line break, so a line is one schema. */
export const schemaLine = (fingerprint: string, schemaJson: string) =>
  `${fingerprint}\t${schemaJson}\n`;

/** A seed of `fingerprint32` that gives a fingerprint of a text apart from its own. */
const CHECK_SEED = 0x5bd1e995;

/**
 * A second fingerprint of a schema's JSON, as its line writes it: which of
 * the lines of one 32-bit fingerprint is a tool's. Two schemas that give
 * both are a search some 65,000 times as long as two that give one.
 */
export const schemaCheck = (json: string) =>
  fingerprint32(json, 0, json.length, CHECK_SEED).toString(36);

/**
 * The schema an entry holds as its line writes it: its text as listed, where
 * it was never read (not parsed only to be written again), else as
 * `JSON.stringify` writes it; `undefined` where it holds none, or the text
 * holds a line break, which would start a line of its own, read under
 * whatever fingerprint it wrote (neither text holds one: this keeps the
 * format whatever vouched for it).
 */
export function schemaJsonOf(entry: ToolEntry | undefined): string | undefined {
  if (entry === undefined || !holdsSchema(entry)) return undefined;
  const json = entry.listedSchema?.unread ?? JSON.stringify(entry.inputSchema);
  return json === undefined || json.includes("\n") ? undefined : json;
}

/** Where the next line that starts with `key` begins, after `from`; -1 where none does. */
const lineAfter = (text: string, key: string, from: number) => {
  const at = text.indexOf(`\n${key}`, from);
  return at === -1 ? -1 : at + 1;
};

/**
 * The schema with `fingerprint` in a chunk's text, and the length of its JSON: the line of it
 * whose JSON gives `check` (`schemaCheck`), else, where the map says none, the first; `undefined`
 * when the text holds none.
 */
export function findSchema(
  text: string,
  fingerprint: string,
  check?: string,
): { schema: unknown; chars: number } | undefined {
  const key = `${fingerprint}\t`;
  for (let start = text.startsWith(key) ? 0 : lineAfter(text, key, 0); start !== -1; ) {
    const end = text.indexOf("\n", start);
    const json = text.slice(start + key.length, end === -1 ? undefined : end);
    if (check === undefined || schemaCheck(json) === check) {
      try {
        return { schema: JSON.parse(json), chars: json.length };
      } catch {
        return undefined;
      }
    }
    start = end === -1 ? -1 : lineAfter(text, key, end);
  }
  return undefined;
}

/** Each line of chunk texts, in their order, by fingerprint, for the fingerprints `keep` wants. */
export function schemaLines(
  texts: Iterable<string>,
  keep: (fingerprint: string) => boolean,
): Map<string, string[]> {
  const lines = new Map<string, string[]>();
  for (const text of texts) {
    for (const line of text.split("\n")) {
      const tab = line.indexOf("\t");
      if (tab <= 0) continue;
      const fingerprint = line.slice(0, tab);
      if (!keep(fingerprint)) continue;
      const kept = lines.get(fingerprint);
      if (kept) kept.push(`${line}\n`);
      else lines.set(fingerprint, [`${line}\n`]);
    }
  }
  return lines;
}

/** Lines packed into chunks of at most `maxChars` characters each. */
export function chunked(lines: Iterable<string>, maxChars: number): string[] {
  const chunks: string[] = [];
  let current = "";
  for (const line of lines) {
    if (current.length > 0 && current.length + line.length > maxChars) {
      chunks.push(current);
      current = "";
    }
    current += line;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** The tools of `map`, by their schemas' fingerprints: what `needsLines` and `linesFor` read. */
export function toolsByFingerprint(map: StoredMap): Map<string, string[]> {
  const byHash = new Map<string, string[]>();
  for (const [original, { schema }] of map.tools) {
    const tools = byHash.get(schema);
    if (tools) tools.push(original);
    else byHash.set(schema, [original]);
  }
  return byHash;
}

/**
 * Whether a write of `merged` over `base` writes the schema lines: KV's
 * chunks lack one (by the map, or as a call found, `chunksLack`), or a tool
 * takes a fingerprint another tool has, whose line may be another schema's.
 */
export function needsLines(
  base: StoredMap,
  merged: StoredMap,
  byHash: ReadonlyMap<string, readonly string[]>,
  chunksLack: ReadonlySet<string>,
): boolean {
  const inBase = new Set([...base.tools.values()].map((tool) => tool.schema));
  const joins = [...merged.tools].some(
    ([original, { schema }]) =>
      base.tools.get(original)?.schema !== schema && (byHash.get(schema)?.length ?? 0) > 1,
  );
  return joins || [...byHash.keys()].some((hash) => !inBase.has(hash) || chunksLack.has(hash));
}

/**
 * The schema lines `merged` needs, from KV's chunks (`texts`) and the schemas
 * this isolate holds (`held`, by original). Of a fingerprint one schema has,
 * one line: the stored one, else this isolate's. Of one several schemas have,
 * a line each, and each tool's check set on `merged`: its own schema's where
 * it is held here, else the one it has, else that of the fingerprint's first
 * line, which it read before. The first line stays first.
 */
export function linesFor(
  merged: StoredMap,
  byHash: ReadonlyMap<string, readonly string[]>,
  texts: Iterable<string>,
  held: (original: string) => string | undefined,
): string[] {
  const stored = schemaLines(texts, (hash) => byHash.has(hash));
  const lines: string[] = [];
  /** Checks taken this write, by text: tools that share a schema share its text. */
  const taken = new Map<string, string>();
  const checkOf = (json: string) => {
    const known = taken.get(json);
    if (known !== undefined) return known;
    const check = schemaCheck(json);
    taken.set(json, check);
    return check;
  };
  for (const [hash, originals] of byHash) {
    const kept = stored.get(hash) ?? [];
    const jsons = originals.map(held);
    const first = kept[0]?.slice(hash.length + 1, -1) ?? jsons.find((json) => json !== undefined);
    // One schema, as most fingerprints several tools have are (tools without arguments).
    const alike = originals.every(
      (original, i) =>
        merged.tools.get(original)?.check === undefined &&
        (jsons[i] === undefined || jsons[i] === first),
    );
    if (alike) {
      const line = kept[0] ?? (first === undefined ? undefined : schemaLine(hash, first));
      if (line !== undefined) lines.push(line);
      continue;
    }
    const byCheck = new Map<string, string>();
    for (const line of kept) {
      const check = checkOf(line.slice(hash.length + 1, -1));
      if (!byCheck.has(check)) byCheck.set(check, line);
    }
    const [firstCheck] = byCheck.keys();
    const used = new Set<string>();
    for (const [i, original] of originals.entries()) {
      const tool = merged.tools.get(original) as StoredTool;
      const json = jsons[i];
      const check = json === undefined ? (tool.check ?? firstCheck) : checkOf(json);
      if (check === undefined) continue;
      tool.check = check;
      used.add(check);
      if (json !== undefined && !byCheck.has(check)) byCheck.set(check, schemaLine(hash, json));
    }
    for (const [check, line] of byCheck) if (used.has(check)) lines.push(line);
  }
  return lines;
}
