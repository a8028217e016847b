/**
 * `npm run deploy -- --env NAME [wrangler deploy's options]`: `npm run check`
 * on that environment, as wrangler would deploy it (its `--var`s included),
 * then `wrangler deploy` with the same arguments. Refuses the top level (the
 * local development setup), and a KV id still a placeholder unless it is a
 * `--dry-run`.
 */
import { spawnSync } from "node:child_process";
import { runCheck, varsOf } from "./check";

/** The values of `--name VALUE`, `--name=VALUE` and `-n VALUE` in `args`. */
function valuesOf(args: readonly string[], name: string, short?: string): string[] {
  const found: string[] = [];
  args.forEach((arg, index) => {
    const next = args[index + 1];
    if ((arg === `--${name}` || (short && arg === `-${short}`)) && next !== undefined) {
      found.push(next);
    } else if (arg.startsWith(`--${name}=`)) found.push(arg.slice(name.length + 3));
  });
  return found;
}

const args = process.argv.slice(2);
const [env] = valuesOf(args, "env", "e");
const [configPath] = valuesOf(args, "config", "c");
const dryRun = args.includes("--dry-run");
const clean = runCheck({
  configPath,
  only: [env],
  vars: varsOf(valuesOf(args, "var")),
  forDeploy: true,
  dryRun,
});
if (!clean) {
  console.log("\nNot deployed: the problems above come first.");
  process.exitCode = 1;
} else {
  const wrangler = spawnSync("wrangler", ["deploy", ...args], { stdio: "inherit" });
  process.exitCode = wrangler.status ?? 1;
}
