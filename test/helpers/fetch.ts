/** How the tests send a request: the network's `fetch`, or the proxy's own handler behind one (proxy.ts). */
export type Fetch = (input: Request | string | URL, init?: RequestInit) => Promise<Response>;
