import { AnalyticsMemory } from "../analytics/recorder";
import { SignInMemory } from "../auth/sign-in-memory";
import type { Config } from "../config";
import { ToolMapMemory } from "../toolmap/isolate-memory";
import type { OriginCredentials } from "../transport/headers";
import { ReadBudget } from "../transport/read-bounded";
import { Readiness } from "./readyz";

/**
 * Everything one isolate keeps between requests, each part bounded where it
 * is defined; one per app (`createApp`), so a test plays a cold isolate by
 * making a new one.
 */
export interface IsolateState {
  /**
   * Tools, schemas, names and views per origin (16 origins, 10,000 tools
   * each, of 16 Mi characters of their text together), and what each caller was listed (views of 60,000 tools, a tool in search mode counting 4, or a unit per 320 characters of its text where more; 4,096 callers, 512 of one source, 10 minutes).
   */
  toolMaps: ToolMapMemory;
  /**
   * The origin's sign-in setup (16 origins; metadata 60 s, discovery 5 minutes), today's sign-in
   * writes, broker mode's refreshes (1,000 grants, a minute), and gate mode's identity providers
   * (16, 5 minutes) and the origin's keys (1,000 users, a minute).
   */
  signIn: SignInMemory;
  /** What requests served at once hold of the bodies and events they read whole (32 MiB past each one's first 64 KiB). */
  reads: ReadBudget;
  /** `/readyz`'s last check of the origin (5 seconds; one check at a time). */
  readiness: Readiness;
  /**
   * Call analytics: the clients of 2025 sessions (4,096, 512 of one source, a day), the tasks calls created until their
   * end is written (8,192 tasks, 32 a caller, a day), and when a failed write was last logged.
   */
  analytics: AnalyticsMemory;
}

/** `now`: the clock sign-in's daily budget reads (tests set one, to count in a day of their own). */
export function newIsolateState({ now }: { now?: () => number } = {}): IsolateState {
  return {
    toolMaps: new ToolMapMemory(),
    signIn: new SignInMemory(now),
    reads: new ReadBudget(),
    readiness: new Readiness(),
    analytics: new AnalyticsMemory(),
  };
}

/**
 * Hono's view of the Worker: the wrangler bindings, and what every route is
 * handed. Routes read these with `c.get`: `c.var` builds a new object each time.
 */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    config: Config;
    /** What this isolate keeps between requests, shared by all of them. */
    isolate: IsolateState;
    /** Whose credentials go to the origin on this request, decided once (auth/broker.ts). */
    originCredentials: OriginCredentials;
  };
}
