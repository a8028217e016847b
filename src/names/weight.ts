/**
 * What a tool's original name weighs where the isolate keeps names by their
 * number (the map's pins, each caller's own pins and view, the map in KV): a
 * name as long as MCP asks a name to be at most (128 characters, SEP-986),
 * which every honest origin's is, weighs one; a longer one, one for each 128
 * characters. An origin is untrusted, and a listing may be 16 MiB: by number
 * alone, names of 100 KB would cost what a few hundred thousand tools cost
 * (test/node/tool-names-memory.test.ts). Read off the length: no walk of
 * the name.
 */
export const NAME_WEIGHT_CHARS = 128;

export const nameWeight = (name: string) =>
  name.length <= NAME_WEIGHT_CHARS ? 1 : Math.ceil(name.length / NAME_WEIGHT_CHARS);

/** What `names` weigh together. */
export function namesWeight(names: Iterable<string>): number {
  let weight = 0;
  for (const name of names) weight += nameWeight(name);
  return weight;
}
