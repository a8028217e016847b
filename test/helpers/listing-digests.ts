/** A listing's tools as the proxy reads them from an answer's text, and the digests naming them takes. */
import { vi } from "vitest";
import { readListingText } from "../../src/protocol/listing-text";
import { WrittenTool } from "../../src/protocol/written-tool";

/** The tools of a listing's text, each read from it as the proxy reads an answer. */
export function writtenTools(text: string): WrittenTool[] {
  const read = readListingText(text);
  if (!read) throw new Error("not a listing");
  return read.elements.filter((element): element is WrittenTool => element instanceof WrittenTool);
}

/** WebCrypto digests while `run` runs: counted, not timed. */
export async function digestsDuring(run: () => Promise<unknown>): Promise<number> {
  const digest = vi.spyOn(crypto.subtle, "digest");
  try {
    await run();
    return digest.mock.calls.length;
  } finally {
    digest.mockRestore();
  }
}
