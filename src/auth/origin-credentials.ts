/**
 * Whose credentials go to the origin on a request, by `AUTH_MODE`: the
 * client's own in relay mode; in broker and gate mode never the client's,
 * and the proxy's only where the library validated a token of the proxy's
 * (broker.ts `brokerCredentials`, gate.ts `gateCredentials`). Decided once
 * per request, before any route runs (app.ts).
 */
import type { Config } from "../config";
import type { OriginCredentials } from "../transport/headers";
import { brokerCredentials } from "./broker";
import { gateCredentials } from "./gate";

export function originCredentials(config: Config, ctx: object): OriginCredentials {
  const { auth } = config;
  switch (auth.mode) {
    case "relay":
      return { kind: "client" };
    case "broker":
      return brokerCredentials(config, auth, ctx);
    case "gate":
      return gateCredentials(auth, ctx);
  }
}
