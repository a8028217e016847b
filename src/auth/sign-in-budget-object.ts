/**
 * The `SIGN_IN_BUDGET` Durable Object: one UTC day's count of broker mode's
 * sign-in writes for the whole deployment, one object per day, named by its
 * date (sign-in-budget.ts says why a Durable Object, and what it counts).
 * A Durable Object runs one request's storage reads and writes without
 * another's in between, so a count is never lost to a concurrent one.
 *
 * Its storage is one small record, deleted with the object's alarm a day
 * after its day ended, so past days keep nothing. SQLite-backed, as the Free
 * plan requires (wrangler.toml `exports`).
 */
import { DurableObject } from "cloudflare:workers";
import { counted, forgetAt, NO_WRITES, type SignInWrite, type WriteCounts } from "./sign-in-budget";

const COUNTS = "counts";

export class SignInBudget extends DurableObject {
  /** Counts one `write` of `day` when `budget` has room for it; the counts after, either way. */
  async take(
    write: SignInWrite,
    budget: number,
    day: number,
  ): Promise<{ taken: boolean; counts: WriteCounts }> {
    const storage = this.ctx.storage;
    const before = (await storage.get<WriteCounts>(COUNTS)) ?? NO_WRITES;
    const after = counted(before, write, budget);
    if (after === undefined) return { taken: false, counts: before };
    await storage.put(COUNTS, after);
    if (before.all === 0) await storage.setAlarm(forgetAt(day));
    return { taken: true, counts: after };
  }

  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
