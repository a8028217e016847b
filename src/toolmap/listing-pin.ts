/**
 * One digest for a whole listing's pins (docs/rules.md, "Changed
 * definitions"; SECURITY.md): a new deployment's first listing, or a new
 * isolate's, brings what the map pinned, and would digest every tool's
 * definition only to find each the same as before.
 *
 * The listing pin is SHA-256 over every tool's text as the origin wrote it,
 * each beside the pin the map holds for it, and the pins' scope. It is
 * stored with the map only by a listing whose every tool's pin, digested
 * from that very text, is the map's pin. A later listing whose text, scope
 * and map pins give the same digest therefore lists, tool for tool, the text
 * those pins were digested from: each tool's pin is the map's, without a
 * digest of its own (`proven`). Any other listing, one changed character or
 * one pin the map holds otherwise, gives another digest, and every tool is
 * digested and compared as before. An origin cannot make two texts give one
 * digest any more than it can make two definitions give one pin, nor write
 * the map: it cannot hide a change this way.
 */
import { sha256Parts } from "../digest";
import type { ListedTool } from "../protocol/tools-list";
import { WrittenTool } from "../protocol/written-tool";
import type { ChangeScope } from "../rules/tool-rules";
import { type Definition, pinParts, pinsOf } from "./definition-pins";

/**
 * Written first in what is digested: a version that digests pins otherwise
 * changes it. Version 1 wrote each tool's text apart (copied, 0.9 MB of
 * strings for 1,000 tools, to be encoded in batches); version 2 writes the
 * text the tools lie in once, each tool by its place in it.
 */
const VERSION = "listing-pin 2";

/**
 * What the listing pin covers, in parts digested one after the other: the
 * number of tools; for each, in the listing's order, which run of text it
 * lies in, where in the run and how long its text is, and its pin after its
 * length; then each run, after its length. A run is the text from one tool's
 * start to the last's end of tools that follow each other in one listing's
 * text (a page), as it is written (what lies between them included). No two
 * listings write the same: equal parts mean every tool's text, and its pin,
 * are equal. `undefined` where a tool was not read from a text, or has no pin.
 */
function coveredText(
  tools: readonly ListedTool[],
  pinOf: (original: string) => string | undefined,
  scope: ChangeScope,
): string[] | undefined {
  const places = [`${VERSION}\n${scope}\n${tools.length}\n`];
  const runs: string[] = [];
  let run: { text: string; start: number; end: number } | undefined;
  const endRun = () => {
    if (run) runs.push(`${run.end - run.start}\n`, run.text.slice(run.start, run.end));
  };
  for (const tool of tools) {
    const pin = pinOf(tool.name);
    if (!(tool instanceof WrittenTool) || pin === undefined) return undefined;
    const {
      text,
      span: [start, end],
    } = tool.written;
    if (run === undefined || run.text !== text || start < run.end) {
      endRun();
      run = { text, start, end };
    } else run.end = end;
    places.push(`${runs.length / 2} ${start - run.start} ${end - start} ${pin.length}\n`, pin);
  }
  endRun();
  return places.concat(runs);
}

/** Whether every tool was read from a listing's text: only such a listing has a listing pin. */
export const readFromText = (tools: readonly ListedTool[]): boolean =>
  tools.every((tool) => tool instanceof WrittenTool);

/** The listing pin of `tools`, with the pins `pinOf` gives them; `undefined` where there is none. */
export function listingPin(
  tools: readonly ListedTool[],
  pinOf: (original: string) => string | undefined,
  scope: ChangeScope = "definition",
): Promise<string> | undefined {
  const text = coveredText(tools, pinOf, scope);
  return text === undefined ? undefined : sha256Parts(text);
}

/**
 * A listing whose tools were digested one by one: each tool's pin as
 * digested from its text, and the listing pin they make, digested once when
 * first asked for: the map's (`storedListingPin`) and the caller's own
 * (pin-listing.ts) are the same digest where they read the same pins.
 */
export interface DigestedListing {
  pins: ReadonlyMap<string, string>;
  digest(): Promise<string | undefined>;
}

export async function digestedListing(
  tools: readonly ListedTool[],
  definitions: ReadonlyArray<{ original: string; definition: Definition }>,
  scope: ChangeScope = "definition",
): Promise<DigestedListing> {
  const pins = await pinsOf(definitions);
  let digest: Promise<string | undefined> | undefined;
  return {
    pins,
    digest: () => {
      digest ??=
        definitions.length === tools.length
          ? (listingPin(tools, (original) => pins.get(original), scope) ??
            Promise.resolve(undefined))
          : Promise.resolve(undefined);
      return digest;
    },
  };
}

/**
 * The listing pin to store with the map: only where every tool's pin, as
 * digested from its text, is now the map's (`sharedPin`); else `undefined`.
 */
export async function storedListingPin(
  tools: readonly ListedTool[],
  definitions: ReadonlyArray<{ original: string; definition: Definition }>,
  sharedPin: (original: string) => string | undefined,
  scope: ChangeScope = "definition",
  digested?: DigestedListing,
): Promise<string | undefined> {
  if (definitions.length !== tools.length || !readFromText(tools)) return undefined;
  const { pins, digest } = digested ?? (await digestedListing(tools, definitions, scope));
  for (const [original, pin] of pins) if (pin !== sharedPin(original)) return undefined;
  return digest();
}

/** A listing pin stored for a listing, and where the pins it was made with are read. */
export interface StoredListingPin {
  stored: string | undefined;
  pinOf: (original: string) => string | undefined;
}

/** Each tool's pin as `pinOf` reads it now; `undefined` where one has none. */
function pinsNow(
  tools: readonly ListedTool[],
  pinOf: (original: string) => string | undefined,
): Map<string, string> | undefined {
  const pins = new Map<string, string>();
  for (const { name } of tools) {
    const pin = pinOf(name);
    if (pin === undefined) return undefined;
    pins.set(name, pin);
  }
  return pins;
}

const samePins = (a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>) =>
  a.size === b.size && [...a].every(([original, pin]) => b.get(original) === pin);

/**
 * Whether `tools`, with the pins a listing pin was made with, give that
 * listing pin: then each tool's pin is the one read. Tried in order: the
 * map's listing pin with the map's pins, then the caller's own
 * (caller-pin-records.ts `listing`) with the pins their last listing left
 * them; two that read the same pins take one digest. Found out when a first
 * tool would be digested, not before: a listing whose every tool this
 * isolate knows digests nothing. Every pin is read then, so a pin another
 * request sets meanwhile is not taken for the one proven.
 */
export class ProvenPins {
  #proven: Promise<ReadonlyMap<string, string> | undefined> | undefined;
  #asked = false;

  constructor(
    private readonly tools: readonly ListedTool[],
    private readonly stored: readonly StoredListingPin[],
    private readonly scope: ChangeScope = "definition",
  ) {}

  /** The pins the first listing pin that holds proves; `undefined` where none is stored. */
  #proof(): Promise<ReadonlyMap<string, string> | undefined> | undefined {
    if (this.#proven) return this.#proven;
    const read = this.stored.flatMap(({ stored, pinOf }) =>
      stored === undefined ? [] : [{ stored, pins: pinsNow(this.tools, pinOf) }],
    );
    if (read.length === 0) return undefined;
    this.#proven = (async () => {
      let last:
        | { pins: ReadonlyMap<string, string>; digest: Promise<string> | undefined }
        | undefined;
      for (const { stored, pins } of read) {
        if (pins === undefined) continue;
        const digest =
          last && samePins(last.pins, pins)
            ? last.digest
            : listingPin(this.tools, (original) => pins.get(original), this.scope);
        last = { pins, digest };
        if (digest !== undefined && (await digest) === stored) return pins;
      }
      return undefined;
    })();
    return this.#proven;
  }

  /** The pin of `original` a listing pin proves, else `undefined`; `undefined` at once where none can. */
  of(original: string): Promise<string | undefined> | undefined {
    this.#asked = true;
    return this.#proof()?.then((pins) => pins?.get(original));
  }

  /** Whether the listing's tools were digested one by one: a digest was asked for, and none proven. */
  async digested(): Promise<boolean> {
    return this.#asked && (await this.#proof()) === undefined;
  }

  /**
   * Each tool's schema fingerprint as its pin has it, where a listing pin
   * holds (else `undefined`): the text is the one the pin was digested from,
   * so its schema is the one that fingerprint was given to.
   */
  async schemaFingerprints(): Promise<((original: string) => string | undefined) | undefined> {
    const pins = await this.#proof();
    if (pins === undefined) return undefined;
    return (original) => {
      const pin = pins.get(original);
      if (pin === undefined) return undefined;
      const { fingerprints } = pinParts(pin);
      return fingerprints.slice(0, fingerprints.indexOf("/"));
    };
  }
}
