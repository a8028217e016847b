/**
 * `npm run deploy -- --env NAME [wrangler deploy's options]`: `npm run check`
 * on that environment, as wrangler would deploy it (its `--var`s included),
 * then `wrangler deploy` with the same arguments. Refuses the top level (the
 * local development setup), and a KV id still a placeholder unless it is a
 * `--dry-run`.
 */
import { spawnSync } from "node:child_process";
import { runCheck, valuesOf, varsOf } from "./check";

/** `npm run deploy -- …args`: its exit code, 1 when check refuses (nothing deployed), else wrangler's. */
export function deploy(args: readonly string[]): number {
  const [env] = valuesOf(args, "env", { short: "e" });
  const [configPath] = valuesOf(args, "config", { short: "c" });
  const dryRun = args.includes("--dry-run");
  const clean = runCheck({
    configPath,
    only: [env],
    vars: varsOf(valuesOf(args, "var", { array: true })),
    forDeploy: true,
    dryRun,
  });
  if (!clean) {
    console.log("\nNot deployed: the problems above come first.");
    return 1;
  }
  return spawnSync("wrangler", ["deploy", ...args], { stdio: "inherit" }).status ?? 1;
}

if (import.meta.main) process.exitCode = deploy(process.argv.slice(2));
