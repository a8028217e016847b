/**
 * What the Worker is configured with: the settings read, checked and
 * defaulted (index.ts reads them from `env`), as every other module takes
 * them; and what a setting that cannot be read is reported as.
 */
import { settingPath } from "../json";
import type { ToolPolicy } from "../rules/tool-rules";
import type { Profile, ProfileLimits } from "../schemas/profile";
import type { AuthMode, ValidationMode } from "./auth-modes";
import type { AllowedHost } from "./values";

/** Call analytics' settings (docs/observability.md). */
export interface CallsSettings {
  /** `CALLS`: the Analytics Engine dataset. */
  dataset: AnalyticsEngineDataset;
  /** `CALLS_ANSWER_SAMPLING_RATE`: the share of requests whose calls' answers are read. */
  answerSamplingRate: number;
  /** `WRANGLER_ENV`, required with `CALLS`: the tenant, which indexes its data points (analytics/layout.ts). */
  environment: string;
}

export interface Config {
  originUrl: URL;
  mcpPath: string;
  /** `TOOL_MAP`: the tool map's KV namespace. */
  toolMapKv: KVNamespace;
  /** Call analytics, when `CALLS` binds its dataset (docs/observability.md). */
  calls: CallsSettings | undefined;
  /**
   * The deployed version's id (`CF_VERSION_METADATA`): what a listing
   * rewritten by another isolate is trusted to have been rewritten by.
   */
  deployment: string | undefined;
  originTimeoutMs: number;
  maxBodyBytes: number;
  /** `MAX_BATCH_MESSAGES`: the most messages a batch may hold (transport/post-body.ts). */
  maxBatchMessages: number;
  /**
   * `MAX_LOCAL_ANSWER_BYTES`: the most the proxy writes itself in answer to
   * one request, its answers together (rewrite/local-answers.ts).
   */
  maxLocalAnswerBytes: number;
  /** The profile at `MCP_PATH` (`PROFILE`, or `NAME_PROFILE`), with the limits in force. */
  profile: Profile;
  /** `NAME_MAX_LENGTH` and `MAX_TOOLS`: lower limits for every profile. */
  profileLimits: ProfileLimits;
  /** `TOOL_RULES` and `TOOL_CHANGES`: the operator's say over the tools (docs/rules.md). */
  policy: ToolPolicy;
  /** What to do with arguments that fail the tool's schema (`ARGUMENT_VALIDATION`). */
  argumentValidation: ValidationMode;
  /** Hosts the proxy answers for (`ALLOWED_HOSTS`); empty: any. */
  allowedHosts: readonly AllowedHost[];
  /** The origin clients reach the proxy at (`PUBLIC_URL`), when it is not the one requests arrive for. */
  publicOrigin: string | undefined;
  /** `AUTH_MODE`, with what broker mode needs. */
  auth: AuthMode;
}

/** One thing wrong with the settings. */
export interface ConfigProblem {
  /** The setting's name (`TOOL_RULES`): all a client is ever told, a name and never a value. */
  setting: string;
  /** Where in it, as an operator reads it: `TOOL_RULES.tools["catering.invoice"].name`. */
  path: string;
  problem: string;
  /**
   * A name `env` holds that no setting or binding is read by: the operator's
   * own text, never told to a client (given the value as its name, `wrangler
   * secret put` stores a secret named after its value).
   */
  unread?: true;
}

export type ConfigResult =
  | { kind: "valid"; config: Config }
  | { kind: "invalid"; problems: ConfigProblem[] };

export function problemOf(keys: readonly unknown[], problem: string): ConfigProblem {
  const setting = typeof keys[0] === "string" ? keys[0] : "configuration";
  return { setting, path: keys.length > 0 ? settingPath(keys) : setting, problem };
}
