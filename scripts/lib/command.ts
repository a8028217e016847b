/**
 * How the npm scripts refuse: a command that cannot do what it was asked
 * throws `Refused`, and `runCommand` prints why and exits 1. Its functions
 * can so be asked in a test's own process, without starting one per refusal.
 * Asked for `--help` (or `-h`), a command prints its usage and does nothing.
 */
import { type ParseArgsConfig, parseArgs, stripVTControlCharacters } from "node:util";
import { closestName } from "../../src/args/fix-it-text";

/** Why a command cannot do what it was asked; it has changed nothing. */
export class Refused extends Error {}

export function refuse(message: string): never {
  throw new Refused(message);
}

/** Asked for with `--help` or `-h`: the command's usage, printed; nothing is done, and it succeeds. */
class HelpAsked extends Error {}

/** Throws the command's `usage` (printed by `runCommand`) where `--help` or `-h` comes before any `--`. */
export function helpAsked(args: readonly string[], usage: string): void {
  const options = args.slice(0, args.includes("--") ? args.indexOf("--") : undefined);
  if (options.includes("--help") || options.includes("-h")) throw new HelpAsked(usage);
}

/**
 * A command's arguments as `parseArgs` reads them; an option it does not
 * know, or one without its value, refused with the command's `usage`
 * rather than thrown at the operator as a stack trace; `--help` or `-h`
 * before any `--`, the usage alone.
 */
export function argumentsOf<T extends ParseArgsConfig>(
  config: T,
  usage: string,
): ReturnType<typeof parseArgs<T>> {
  const args = config.args ?? process.argv.slice(2);
  helpAsked(args, usage);
  try {
    return parseArgs(config);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION")
      refuse(`${unknownOption(error, config)}\n${usage}`);
    if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_")) {
      refuse(`${(error as Error).message}\n${usage}`);
    }
    throw error;
  }
}

/**
 * An option `config` does not have, told with the one it is closest to (at most two edits, case
 * and `_` for `-` free); not with Node's own words, whose advice (put it after `--`) an `npm run
 * X -- …` command already took.
 */
function unknownOption(error: unknown, config: ParseArgsConfig): string {
  const given = /^Unknown option '([^']*)'/.exec((error as Error).message)?.[1];
  if (given === undefined) return (error as Error).message;
  const fold = (option: string) => option.replace(/^--?/, "").toLowerCase().replaceAll("_", "-");
  const meant = closestName(given, Object.keys(config.options ?? {}), { fold, within: 2 });
  return meant === undefined
    ? `${given}: no such option.`
    : `${given}: no such option; did you mean --${meant}?`;
}

/**
 * What wrangler's `read` gives of the file at `configPath`; a file it cannot
 * read (no TOML, no such file, no such `--env`) refused with where it stops,
 * not thrown at the operator as a stack trace with the file's text.
 */
export function readingConfig<T>(configPath: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof Error)) throw error;
    const { text, location } = error as {
      text?: string;
      location?: { line?: number; column?: number };
    };
    const where =
      location?.line === undefined ? "" : ` (line ${location.line}, column ${location.column})`;
    refuse(`${configPath}${where}: ${stripVTControlCharacters(text ?? error.message)}`);
  }
}

/** Runs a command: a refusal is printed, and the exit code is 1. */
export async function runCommand(command: () => void | Promise<void>): Promise<void> {
  try {
    await command();
  } catch (error) {
    if (error instanceof HelpAsked) {
      console.log(error.message);
      return;
    }
    if (!(error instanceof Refused)) throw error;
    console.error(error.message);
    process.exitCode = 1;
  }
}
