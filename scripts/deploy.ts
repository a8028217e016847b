/**
 * `npm run deploy -- --env NAME [wrangler deploy's options]`: `npm run check`
 * on that environment, as wrangler would deploy it (its `--var`s included),
 * then `wrangler deploy` with the same arguments. Refuses the top level (the
 * local development setup), and a KV id still a placeholder unless it is a
 * `--dry-run`.
 */
import { spawnSync } from "node:child_process";
import { runCheck, varsOf } from "./check";

/**
 * The values of `--name VALUE`, `--name=VALUE` and `-n VALUE` in `args`, as
 * wrangler reads them: an `array` option (`--var`) takes every word after it
 * up to the next option, so `--var A:1 B:2` sets both.
 */
function valuesOf(
  args: readonly string[],
  name: string,
  { short, array = false }: { short?: string; array?: boolean } = {},
): string[] {
  const found: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] as string;
    if (arg.startsWith(`--${name}=`)) found.push(arg.slice(name.length + 3));
    else if (arg === `--${name}` || (short && arg === `-${short}`)) {
      if (index + 1 >= args.length) continue;
      found.push(args[++index] as string);
    } else continue;
    while (array && index + 1 < args.length && !(args[index + 1] as string).startsWith("-")) {
      found.push(args[++index] as string);
    }
  }
  return found;
}

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
