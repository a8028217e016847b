/**
 * The floor for a Worker that must look at a request before it forwards it,
 * as the proxy must: the bare pass-through Worker, but a POST's body is read
 * whole (as the proxy's transport/post-body.ts reads one of known length)
 * and its bytes sent on.
 */
// wrangler.toml binds the Durable Object, so every bundle made with it exports the class.
export { SignInBudget } from "../../src/auth/sign-in-budget-object";

interface Env {
  ORIGIN_URL: string;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const body = request.method === "POST" ? new Uint8Array(await request.arrayBuffer()) : null;
    return fetch(new URL(url.pathname + url.search, env.ORIGIN_URL), {
      method: request.method,
      headers: request.headers,
      body,
    });
  },
} satisfies ExportedHandler<Env>;
