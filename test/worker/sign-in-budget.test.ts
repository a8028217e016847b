/**
 * The counter behind broker mode's daily budget of sign-in writes
 * (src/auth/sign-in-budget.ts): its rule, and the `SIGN_IN_BUDGET` Durable
 * Object that keeps one day's count. What a client meets is in
 * test/e2e/sign-in-budget.test.ts.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  counted,
  dayName,
  forgetAt,
  NO_WRITES,
  type SignInWrite,
  type WriteCounts,
} from "../../src/auth/sign-in-budget";

/** Counts `writes` one after another, as the object does; how many were taken. */
function countAll(writes: SignInWrite[], budget: number): { taken: number; counts: WriteCounts } {
  let counts = NO_WRITES;
  let taken = 0;
  for (const write of writes) {
    const after = counted(counts, write, budget);
    if (after === undefined) continue;
    counts = after;
    taken++;
  }
  return { taken, counts };
}

describe("the budget's rule", () => {
  it("takes every kind of write up to the budget, and registrations up to half of it", () => {
    expect(countAll(Array(10).fill("consent"), 7)).toEqual({
      taken: 7,
      counts: { all: 7, registrations: 0 },
    });
    expect(countAll(Array(10).fill("registration"), 7)).toEqual({
      taken: 3,
      counts: { all: 3, registrations: 3 },
    });
    // Registrations spent leave the rest to the writes of clients that need none.
    const flood: SignInWrite[] = [...Array(10).fill("registration"), ...Array(10).fill("approval")];
    expect(countAll(flood, 7)).toEqual({ taken: 7, counts: { all: 7, registrations: 3 } });
    // Other writes first: registrations still stop at the whole budget.
    const late: SignInWrite[] = [...Array(6).fill("consent"), ...Array(3).fill("registration")];
    expect(countAll(late, 7)).toEqual({ taken: 7, counts: { all: 7, registrations: 1 } });
  });
});

describe("the SIGN_IN_BUDGET object", () => {
  const day = 60_000 + Math.floor(Math.random() * 10_000);
  // wrangler.toml's top level binds it, as tests run.
  const budget = () =>
    (env.SIGN_IN_BUDGET as NonNullable<Env["SIGN_IN_BUDGET"]>).getByName(dayName(day));

  it("counts a day's writes, refuses those past the budget, and forgets the day a day after it ended", async () => {
    const stub = budget();
    expect(await stub.take("registration", 3, day)).toEqual({
      taken: true,
      counts: { all: 1, registrations: 1 },
    });
    expect(await stub.take("registration", 3, day)).toEqual({
      taken: false,
      counts: { all: 1, registrations: 1 },
    });
    expect(await stub.take("consent", 3, day)).toMatchObject({ taken: true });
    expect(await stub.take("approval", 3, day)).toMatchObject({ taken: true });
    expect(await stub.take("consent", 3, day)).toEqual({
      taken: false,
      counts: { all: 3, registrations: 1 },
    });

    expect(await runInDurableObject(stub, (_, state) => state.storage.getAlarm())).toBe(
      forgetAt(day),
    );
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await runInDurableObject(stub, (_, state) => state.storage.list())).toEqual(new Map());
  });
});
