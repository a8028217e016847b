/** `GET /healthz`, answered locally: for load balancers and for operators checking a deploy. */
import type { Context } from "hono";
import packageJson from "../../package.json";
import type { AppEnv } from "./app-env";

export function healthz(c: Context<AppEnv>): Response {
  return c.json({
    status: "ok",
    origin: c.get("config").originUrl.host,
    version: packageJson.version,
  });
}
