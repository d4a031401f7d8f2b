/**
 * A limit on the bytes of request bodies held at once (the listener's --max-buffer, the relay's in
 * all and per channel). A request counts what it holds through a lease, and gives it all back at once
 * when it is done with it, or when its body is refused.
 */
export class ByteBudget {
  held = 0;
  constructor(readonly limit: number) {}
}

export interface BudgetLease {
  /** Counts `bytes` against every budget of the lease; false, counting nothing, when one has no room. */
  take(bytes: number): boolean;
  /** Gives back everything taken so far. */
  giveBack(): void;
}

/** One request's share of one budget or several (a relay channel's and the relay's in all). */
export function leaseFrom(...budgets: ByteBudget[]): BudgetLease {
  let taken = 0;
  return {
    take(bytes) {
      if (budgets.some((budget) => budget.held + bytes > budget.limit)) return false;
      for (const budget of budgets) budget.held += bytes;
      taken += bytes;
      return true;
    },
    giveBack() {
      for (const budget of budgets) budget.held -= taken;
      taken = 0;
    },
  };
}
