/**
 * A listing pin, the map's or a caller's own (src/toolmap/listing-pin.ts),
 * decides nothing: it spares digests, and what a listing holds, shows and
 * logs is what digesting every tool decides. Each case plays one sequence
 * of listings twice, on origins of their own: once as the proxy runs, once
 * with every listing pin's proof left out (each tool digested), and the two
 * must hold the same tools and log the same lines at every step. The
 * sequences mix callers listed apart (alice 300 tools, bob 280, and
 * descriptions that name them), new isolates and ones reused, a change and
 * its revert, a tool the origin adds (and changes), text spaced otherwise,
 * the origin saying its tools changed, the operator's accept key, `log` and
 * `hold`, and both scopes, each listing 11 s after the last. The property
 * test (listing-pin-property.test.ts) lists a few tools, never enough for a
 * caller's own listing pin (250); here, sequence 9 found a warm isolate's
 * write of one from a record another isolate had written over since, which
 * showed a change of the added tool unheld.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type ChangeScope, NO_RULES } from "../../src/rules/tool-rules";
import { profileOf } from "../../src/schemas/profile";
import { callerNamed } from "../../src/toolmap/callers";
import { acceptKey } from "../../src/toolmap/definition-pins";
import { FRESH_MS, ToolMapMemory, toolMapScopes } from "../../src/toolmap/isolate-memory";
import { ProvenPins } from "../../src/toolmap/listing-pin";
import { ToolMap } from "../../src/toolmap/tool-map";
import { writtenTools } from "../helpers/listing-digests";
import { captureLogs } from "../helpers/logs";

type Who = "alice" | "bob";
const COUNT: Record<Who, number> = { alice: 300, bob: 280 };

interface Step {
  who: Who;
  /** An isolate listed in before (its index), or a new one. */
  isolate: number | "new";
  /** tool_7's description: as first listed, or changed. */
  changed: boolean;
  /** Descriptions that name the caller. */
  named: boolean;
  /** Spaces between tools: the same tools, another text. */
  spaced: boolean;
  /** A tool the origin added: not listed, listed, or listed changed. */
  added: 0 | 1 | 2;
  mode: "hold" | "log";
  scope: ChangeScope;
  /** The origin said its tools changed before this listing (the isolate names it from scratch). */
  forget: boolean;
  /** The operator accepts the definition this step held, once it is listed. */
  accept: boolean;
}

function listingText({ who, changed, named, spaced, added }: Step): string {
  const inputSchema = { type: "object", properties: { path: { type: "string" } } };
  const tools = Array.from({ length: COUNT[who] }, (_, i) => ({
    name: `tool_${i}`,
    description: `Tool ${i}${changed && i === 7 ? ", and more" : ""}.${named ? ` For ${who}.` : ""}`,
    inputSchema,
  }));
  if (added > 0)
    tools.push({ name: "added", description: added === 1 ? "Adds." : "Wipes.", inputSchema });
  const written = tools.map((tool) => JSON.stringify(tool)).join(spaced ? ", " : ",");
  return `{"jsonrpc":"2.0","id":1,"result":{"tools":[${written}]}}`;
}

/** A seeded sequence of steps (mulberry32): the same for both plays. */
function steps(seed: number, count: number): Step[] {
  let state = seed;
  const random = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const chance = (p: number) => random() < p;
  let isolates = 0;
  return Array.from({ length: count }, () => {
    const isolate = isolates === 0 || chance(0.4) ? "new" : Math.floor(random() * isolates);
    if (isolate === "new") isolates++;
    return {
      who: chance(0.5) ? "alice" : "bob",
      isolate,
      changed: chance(0.4),
      named: chance(0.3),
      spaced: chance(0.3),
      added: chance(0.5) ? 0 : chance(0.5) ? 1 : 2,
      mode: chance(0.75) ? "hold" : "log",
      scope: chance(0.85) ? "definition" : "schema",
      forget: chance(0.2),
      accept: chance(0.3),
    };
  });
}

/**
 * What each step held and logged, played on a new origin, and how many new isolates' listings a
 * listing pin proved; `proofs`: whether listing pins prove.
 */
async function play(
  sequence: Step[],
  proofs: boolean,
): Promise<{ outcomes: string[]; proven: number }> {
  const fingerprints = vi.spyOn(ProvenPins.prototype, "schemaFingerprints");
  if (!proofs) {
    vi.spyOn(ProvenPins.prototype, "of").mockReturnValue(undefined);
    fingerprints.mockResolvedValue(undefined);
    vi.spyOn(ProvenPins.prototype, "digested").mockResolvedValue(false);
  }
  const scopes = await toolMapScopes(
    new URL(`https://origin.example/mcp?map=${crypto.randomUUID()}`),
    profileOf("openai").names,
  );
  const isolates: ToolMapMemory[] = [];
  const outcomes: string[] = [];
  // Each step past what an isolate takes for what KV holds (`FRESH_MS`), as listings minutes apart.
  const now = Date.now.bind(Date);
  let later = 0;
  vi.spyOn(Date, "now").mockImplementation(() => now() + later);
  for (const step of sequence) {
    later += FRESH_MS + 1_000;
    const memory = step.isolate === "new" ? new ToolMapMemory() : isolates[step.isolate];
    if (!memory) throw new Error("no isolate");
    if (step.isolate === "new") isolates.push(memory);
    const writes: Promise<unknown>[] = [];
    const map = new ToolMap(
      env.TOOL_MAP,
      scopes,
      profileOf("openai"),
      memory,
      (write) => writes.push(write),
      { rules: NO_RULES, changes: step.mode, scope: step.scope },
      undefined,
      callerNamed(step.who),
    );
    if (step.forget) map.forget();
    const logs = captureLogs();
    const { hidden } = await map.nameListing(writtenTools(listingText(step)));
    await Promise.all(writes);
    const lines = logs
      .lines()
      .filter(({ event }) => event.startsWith("tool_definition"))
      .map(({ event, tool, from, to }) => `${event} ${tool} ${from} ${to}`);
    const changes = logs.events("tool_definition_changed");
    logs.restore();
    if (step.accept) {
      for (const { tool, to } of changes) {
        await env.TOOL_MAP.put(acceptKey(scopes.origin, String(to), String(tool)), String(tool));
      }
    }
    outcomes.push(`${step.who} held [${[...hidden].sort().join(",")}] ${lines.sort().join("; ")}`);
  }
  const proven = await Promise.all(fingerprints.mock.results.map(({ value }) => value));
  vi.restoreAllMocks();
  return { outcomes, proven: proven.filter((found) => found !== undefined).length };
}

afterEach(() => vi.restoreAllMocks());

describe("listing pins decide nothing a digest per tool would not", () => {
  it("holds and logs the same at every step of 12 sequences, and proves listings in some", {
    timeout: 300_000,
  }, async () => {
    let provenAll = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const sequence = steps(seed, 24);
      const proven = await play(sequence, true);
      const digested = await play(sequence, false);
      expect({ seed, outcomes: proven.outcomes }).toEqual({ seed, outcomes: digested.outcomes });
      provenAll += proven.proven;
    }
    // Not plays where no listing pin held: new isolates' listings were proven.
    expect(provenAll).toBeGreaterThan(0);
  });
});
