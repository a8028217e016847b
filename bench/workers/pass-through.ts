/**
 * The floor for any Worker proxy: a fetch handler that only forwards the
 * request to the origin (path and query kept) and returns its answer.
 */
// wrangler.toml binds the Durable Object, so every bundle made with it exports the class.
export { SignInBudget } from "../../src/auth/sign-in-budget-object";

interface Env {
  ORIGIN_URL: string;
}

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    return fetch(new Request(new URL(url.pathname + url.search, env.ORIGIN_URL), request));
  },
} satisfies ExportedHandler<Env>;
