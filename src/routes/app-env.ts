import type { ListingCallers } from "../auth/listing-callers";
import type { Config } from "../config";
import type { ToolMapMemory } from "../toolmap/tool-map";
import type { OriginCredentials } from "../transport/headers";

/**
 * Hono's view of the Worker: the wrangler bindings, and what every route is
 * handed. Routes read these with `c.get`: `c.var` builds a new object each time.
 */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    config: Config;
    /** This isolate's memory of tool names, shared by all its requests. */
    toolMapMemory: ToolMapMemory;
    /** Callers the origin showed its tools to lately (relay mode, `enforce`). */
    listingCallers: ListingCallers;
    /** Whose credentials go to the origin on this request, decided once (auth/broker.ts). */
    originCredentials: OriginCredentials;
  };
}
