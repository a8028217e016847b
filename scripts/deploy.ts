/**
 * `npm run deploy -- --env NAME [wrangler deploy's options]`: `npm run check`
 * on that environment, as wrangler would deploy it (its `--var`s and the
 * secrets of its `--secrets-file` included), then `wrangler deploy` with the
 * same arguments. Refuses the top level (the
 * local development setup), a KV id still a placeholder unless it is a
 * `--dry-run`, and a file or environment named in a form check does not read.
 */
import { spawnSync } from "node:child_process";
import { runCheck, valuesOf, varsOf } from "./check";
import { helpAsked, runCommand } from "./lib/command";

const USAGE = `Usage: npm run deploy -- --env NAME [wrangler deploy's options]

Checks the environment as npm run check does, as wrangler would deploy it (its --var NAME:VALUE
settings and the secrets of its --secrets-file included), then runs wrangler deploy with the
same arguments; refuses the top level, and a KV namespace id still a placeholder unless
--dry-run. npx wrangler deploy --help lists wrangler's options.`;

/**
 * An argument that says which file or environment wrangler deploys in a form
 * check does not read: yargs also takes `-c=FILE`, `-cFILE`, `--c FILE`, a
 * group such as `-hc FILE`, and `--cwd DIR` (another directory's
 * wrangler.toml), so wrangler would deploy what check never read.
 */
const unreadWhere = (arg: string) =>
  /^--(cwd|c|e)(=|$)/.test(arg) || (/^-[A-Za-z]*[ce]/.test(arg) && arg !== "-c" && arg !== "-e");

/**
 * Whether wrangler (yargs) reads `args` as a dry run: `--dry-run` or
 * `--dryRun`, unless `false` follows, `=true`, and the last of several
 * counts; `--dry-run false`, `=false`, `=1` and `--no-dry-run` deploy. A
 * dry run taken for a deploy is only checked harder; the reverse would let
 * a placeholder namespace id through.
 */
export function isDryRun(args: readonly string[]): boolean {
  let dryRun = false;
  for (let index = 0; index < args.length; index++) {
    const [flag, value] = (args[index] as string).split(/=(.*)/s);
    if (flag === "--no-dry-run" || flag === "--no-dryRun") dryRun = false;
    if (flag !== "--dry-run" && flag !== "--dryRun") continue;
    const next = args[index + 1];
    if (value !== undefined) dryRun = value === "true";
    else if (next === "true" || next === "false") dryRun = args[++index] === "true";
    else dryRun = true;
  }
  return dryRun;
}

/** `npm run deploy -- …args`: its exit code, 1 when check refuses (nothing deployed), else wrangler's. */
export function deploy(args: readonly string[]): number {
  helpAsked(args, USAGE);
  const unread = args.find(unreadWhere);
  if (unread !== undefined) {
    console.log(
      `${unread}: npm run deploy checks what --env NAME, --env=NAME, -e NAME, --config FILE, --config=FILE and -c FILE name, in this directory, and reads no other form: give it so.`,
    );
    console.log("\nNot deployed: the problems above come first.");
    return 1;
  }
  // yargs reads both spellings (and refuses the option given twice).
  const [secretsFile] = ["secrets-file", "secretsFile"].flatMap((name) => valuesOf(args, name));
  const [env] = valuesOf(args, "env", { short: "e" });
  const [configPath] = valuesOf(args, "config", { short: "c" });
  // The hosts wrangler deploys to besides the file's (yargs' aliases: --route, --domain).
  const routes = ["routes", "route"].flatMap((name) => valuesOf(args, name, { array: true }));
  const domains = ["domains", "domain"].flatMap((name) => valuesOf(args, name, { array: true }));
  const clean = runCheck({
    configPath,
    only: [env],
    vars: varsOf(valuesOf(args, "var", { array: true })),
    served: { routes: routes.length > 0 ? routes : undefined, domains },
    secretsFile,
    forDeploy: true,
    dryRun: isDryRun(args),
  });
  if (!clean) {
    console.log("\nNot deployed: the problems above come first.");
    return 1;
  }
  return spawnSync("wrangler", ["deploy", ...args], { stdio: "inherit" }).status ?? 1;
}

if (import.meta.main) {
  await runCommand(() => {
    process.exitCode = deploy(process.argv.slice(2));
  });
}
