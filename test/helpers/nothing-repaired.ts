import type { RepairReport } from "../../src/args/repair";

/** The report of a repair that changed nothing: each list empty, nothing limited. */
export const NOTHING_REPAIRED: RepairReport = {
  renamedKeys: [],
  coercions: [],
  enumCased: [],
  dropped: [],
  limited: false,
};
