/**
 * The system browser a browser test drives: Debian's Chromium (never a
 * downloaded build), at `CHROMIUM_PATH`, else `chromium` on `PATH`, else
 * /usr/bin/chromium. Outside CI a machine without one skips the browser test
 * with a notice that says how to get it; under `CI=true` (where `.ci/run`
 * installs it) the test runs and fails without one.
 */
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

const executable = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? onPath("chromium") ?? "/usr/bin/chromium";

/** Why the browser test is skipped here; `undefined` when it runs (always under CI). */
export const chromiumMissing: string | undefined =
  process.env.CI === "true" || executable(CHROMIUM_PATH)
    ? undefined
    : `skipped: no Chromium at ${CHROMIUM_PATH}. Install Debian's chromium (sudo apt-get install chromium) or set CHROMIUM_PATH to one; CI (CI=true) always runs it`;

/** The node project's global setup: the notice, printed once where a developer sees it. */
export default function announce(): void {
  if (chromiumMissing) console.warn(`\n[test/node/consent-page.test.ts] ${chromiumMissing}\n`);
}
