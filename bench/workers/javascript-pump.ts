/**
 * The floor for a stream the proxy reads in JavaScript: the origin's answer
 * through the proxy's own pump (src/transport/hand-off.ts `transformUntil`)
 * with a rewriter that hands every chunk on as it came and never finishes.
 * Each chunk is read and written by JavaScript, as the proxy's are until a
 * listing is answered, with no event looked for.
 */
// wrangler.toml binds the Durable Object, so every bundle made with it exports the class.
export { SignInBudget } from "../../src/auth/sign-in-budget-object";

import { transformUntil } from "../../src/transport/hand-off";

interface Env {
  ORIGIN_URL: string;
}

const passEveryChunk = {
  write: async (chunk: Uint8Array, emit: (bytes: Uint8Array) => void) => emit(chunk),
  end() {},
  release() {},
};

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const origin = await fetch(
      new Request(new URL(url.pathname + url.search, env.ORIGIN_URL), request),
    );
    if (!origin.body) return origin;
    return new Response(
      transformUntil(origin.body, passEveryChunk, () => false),
      origin,
    );
  },
} satisfies ExportedHandler<Env>;
