/**
 * `npm run deploy -- --env NAME [wrangler deploy's options]`: `npm run check`
 * on that environment, as wrangler would deploy it (its `--var`s included),
 * then `wrangler deploy` with the same arguments. Refuses the top level (the
 * local development setup), a KV id still a placeholder unless it is a
 * `--dry-run`, and a file or environment named in a form check does not read.
 */
import { spawnSync } from "node:child_process";
import { runCheck, valuesOf, varsOf } from "./check";

/**
 * An argument that says which file or environment wrangler deploys in a form
 * check does not read: yargs also takes `-c=FILE`, `-cFILE`, `--c FILE`, a
 * group such as `-hc FILE`, and `--cwd DIR` (another directory's
 * wrangler.toml), so wrangler would deploy what check never read.
 */
const unreadWhere = (arg: string) =>
  /^--(cwd|c|e)(=|$)/.test(arg) || (/^-[A-Za-z]*[ce]/.test(arg) && arg !== "-c" && arg !== "-e");

/** `npm run deploy -- …args`: its exit code, 1 when check refuses (nothing deployed), else wrangler's. */
export function deploy(args: readonly string[]): number {
  const unread = args.find(unreadWhere);
  if (unread !== undefined) {
    console.log(
      `${unread}: npm run deploy checks what --env NAME, --env=NAME, -e NAME, --config FILE, --config=FILE and -c FILE name, in this directory, and reads no other form: give it so.`,
    );
    console.log("\nNot deployed: the problems above come first.");
    return 1;
  }
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
