/**
 * How the npm scripts refuse: a command that cannot do what it was asked
 * throws `Refused`, and `runCommand` prints why and exits 1. Its functions
 * can so be asked in a test's own process, without starting one per refusal.
 */

/** Why a command cannot do what it was asked; it has changed nothing. */
export class Refused extends Error {}

export function refuse(message: string): never {
  throw new Refused(message);
}

/** Runs a command: a refusal is printed, and the exit code is 1. */
export async function runCommand(command: () => void | Promise<void>): Promise<void> {
  try {
    await command();
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    console.error(error.message);
    process.exitCode = 1;
  }
}
