import type { Config } from "./config";

/** Hono's view of the Worker: the wrangler bindings, and the parsed config every route uses. */
export interface AppEnv {
  Bindings: Env;
  Variables: { config: Config };
}
