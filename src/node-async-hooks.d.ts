/**
 * The part of `node:async_hooks` the Worker uses: workerd's AsyncLocalStorage
 * (the `nodejs_als` flag in wrangler.toml). Declared here, not by Node's
 * types, which would type the Worker's globals as Node's.
 */
declare module "node:async_hooks" {
  export class AsyncLocalStorage<T> {
    run<R>(store: T, callback: () => R): R;
    getStore(): T | undefined;
  }
}
