/**
 * The proxy as wrangler.toml builds it, with its `TOOL_MAP` binding counted,
 * for the KV section of the benchmark:
 *
 * - `GET /__bench/kv` answers the KV operations since it was last asked;
 * - `POST /__bench/cold-isolate` starts over with an empty isolate memory, as a
 *   new isolate would (KV keeps what it holds).
 */
// wrangler.toml binds the Durable Object, so every bundle made with it exports the class.
export { SignInBudget } from "../../src/auth/sign-in-budget-object";

import { createApp } from "../../src/app";
import { type CountedKv, countingKv } from "../../support/counting-kv";

let app = createApp();
let counted: CountedKv | undefined;

export default {
  fetch(request, env, ctx) {
    counted ??= countingKv(env.TOOL_MAP);
    switch (new URL(request.url).pathname) {
      case "/__bench/kv": {
        const counts = { ...counted.counts };
        counted.reset();
        return Response.json(counts);
      }
      case "/__bench/cold-isolate":
        app = createApp();
        return new Response(null, { status: 204 });
      default:
        return app.fetch(request, { ...env, TOOL_MAP: counted.kv }, ctx);
    }
  },
} satisfies ExportedHandler<Env>;
