/**
 * One tool name made legal (src/names/sanitize.ts) within the 128 MB an
 * isolate has. An origin is untrusted and a listing may be 16 MiB
 * (SECURITY.md): one name of U+FDFA, which NFKD decomposes into 18
 * characters, is some 100 M code units decomposed whole, and workerd
 * aborted (`Reached heap limit`), ending every request the isolate served.
 * Run in a Node process of V8's with a 128 MB heap, as workerd's isolate is.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

/** Names the largest such name a 16 MiB listing holds under `profile`, in a process of 128 MB. */
async function nameIn128MB(profile: string): Promise<string> {
  const script = `
    import { nameRules } from "./src/names/profiles.ts";
    import { sanitizeName } from "./src/names/sanitize.ts";
    // 3 bytes of UTF-8 each: 16.5 MB of a listing's 16 MiB.
    const original = "\\uFDFA".repeat(5_500_000);
    process.stdout.write(sanitizeName(original, nameRules(${JSON.stringify(profile)})).name);
  `;
  const { stdout } = await run(
    process.execPath,
    ["--import", "tsx", "--max-old-space-size=128", "--input-type=module", "--eval", script],
    { cwd: process.cwd(), maxBuffer: 1 << 20 },
  );
  return stdout;
}

describe("a long tool name made legal", () => {
  it("takes no more than an isolate's 128 MB, whatever NFKD makes of it", async () => {
    // U+FDFA decomposes into Arabic letters and spaces: none allowed, each one `_`.
    expect(await nameIn128MB("openai")).toMatch(/^_{57}_[0-9a-z]{6}$/);
    expect(await nameIn128MB("portable")).toMatch(/^t__{54}_[0-9a-z]{6}$/);
  });
});
