/**
 * Miniflare's local KV, for a node test that runs the proxy's modules against
 * a real KV (never a hand-made one): one namespace per test file, made before
 * its tests and disposed of after them.
 */
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { afterAll, beforeAll } from "vitest";

/** The file's `TOOL_MAP` namespace, once its tests run. */
export function localKv(): () => KVNamespace {
  let miniflare: Miniflare | undefined;
  let kv: KVNamespace | undefined;
  beforeAll(async () => {
    miniflare = new Miniflare(
      convertV4MiniflareOptions({
        modules: true,
        script: "export default {}",
        kvNamespaces: ["TOOL_MAP"],
      }),
    );
    kv = (await miniflare.getKVNamespace("TOOL_MAP")) as unknown as KVNamespace;
  });
  afterAll(() => miniflare?.dispose());
  return () => {
    if (kv === undefined) throw new Error("no KV before the tests run");
    return kv;
  };
}
