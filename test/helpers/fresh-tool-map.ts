import { env } from "cloudflare:workers";
import type { ProfileName } from "../../src/names/profiles";
import type { ToolPolicy } from "../../src/rules/tool-rules";
import { type Profile, profileOf } from "../../src/schemas/profile";
import { ToolMapMemory } from "../../src/toolmap/isolate-memory";
import { ToolMap } from "../../src/toolmap/tool-map";

/** A tool map of its own for one profile (by name, or as made), in an isolate's memory of its own, that has listed nothing; `policy`: the operator's. */
export const freshToolMap = (profile: ProfileName | Profile, policy?: ToolPolicy) =>
  new ToolMap(
    env.TOOL_MAP,
    { origin: `test:${crypto.randomUUID()}`, legacy: `test:${crypto.randomUUID()}` },
    typeof profile === "string" ? profileOf(profile) : profile,
    new ToolMapMemory(),
    () => {},
    policy,
  );
