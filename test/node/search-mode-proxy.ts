/**
 * The proxy in search mode as the LLM frameworks' tests meet it: served by
 * wrangler in front of the catalog origin with 300 tools, over OpenAI's 128
 * (the client gets `search_tools` and `call_tool`); the origin echoes what
 * reached it. Started before a file's tests and stopped after them.
 */
import { afterAll, beforeAll } from "vitest";
import { startCatalogOrigin } from "../fixtures/node/catalog-origin";
import { serveProxy } from "./serve-proxy";

/** The proxy's URL, once the file's tests run. */
export function searchModeProxy(): () => string {
  let catalog: Awaited<ReturnType<typeof startCatalogOrigin>> | undefined;
  let proxy: Awaited<ReturnType<typeof serveProxy>> | undefined;
  beforeAll(async () => {
    catalog = await startCatalogOrigin();
    proxy = await serveProxy(`${catalog.url.href}?tools=300`);
  });
  afterAll(async () => {
    await proxy?.dispose();
    catalog?.close();
  });
  return () => {
    if (!proxy) throw new Error("the search-mode proxy is not serving yet");
    return proxy.url.href;
  };
}
