/**
 * The caller origin (test/fixtures/node/caller-origin.ts), which lists each
 * bearer token its own tools, from tests: a fresh map of it, what each
 * token is listed, and a client's requests signed in as one of them.
 */
import { expect } from "vitest";
import { CALLER_ORIGIN, type Fetch } from "./proxy";

export interface CallerTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/** A tool of every user's: the one their calls name. */
export const USER_READ: CallerTool = {
  name: "user.read",
  description: "Reads an item of the user's.",
  inputSchema: { type: "object", properties: { id: { type: "string" } } },
};

/** A tool the rules of the caller-quota tests hide (`admin.*`): only a listing tells a call's verdict. */
export const ADMIN_PAYROLL: CallerTool = {
  name: "admin.payroll",
  description: "Exports the payroll.",
  inputSchema: { type: "object", properties: { month: { type: "string" } } },
};

/** A fresh map of the caller origin (`query` added to its URL): what each token is listed is set per test. */
export function callerOrigin(query = "") {
  const map = crypto.randomUUID();
  return {
    url: `${CALLER_ORIGIN}/mcp?map=${map}${query}`,
    /** Lists `tools` to the caller with `token` from now on (`""`: a request with none). */
    async list(token: string, tools: readonly CallerTool[]) {
      const response = await fetch(`${CALLER_ORIGIN}/__tools?map=${map}&caller=${token}`, {
        method: "POST",
        body: JSON.stringify(tools),
      });
      expect(response.status).toBe(204);
    },
    /** How many times the origin was asked for each caller's listing. */
    async listings(): Promise<Record<string, number>> {
      return (await fetch(`${CALLER_ORIGIN}/__listings?map=${map}`)).json();
    },
  };
}

/** `fetch` with the caller's bearer token on every request (none for `""`). */
export const signedInAs =
  (token: string, fetch: Fetch): Fetch =>
  (input, init) => {
    const headers = new Headers(init?.headers);
    if (token !== "") headers.set("authorization", `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
