/**
 * The request budgets of this process (budget.ts), by config node id: a config node's counts
 * and queue survive a redeploy (the new runtime takes the budget and sets its caps again), not
 * a restart of the process.
 */
import { Budget } from './budget';

/** The budgets of the config nodes of this process, by id. */
export class BudgetRegistry {
  private readonly byId = new Map<string, Budget>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  /** The budget of a config node: the one it had before a redeploy, or a new one. */
  budget(id: string): Budget {
    let budget = this.byId.get(id);
    if (!budget) {
      budget = new Budget(this.now);
      this.byId.set(id, budget);
    }
    return budget;
  }

  peek(id: string): Budget | undefined {
    return this.byId.get(id);
  }

  /** Drops a removed config node's budget (its counts end with it). */
  forget(id: string): void {
    const budget = this.byId.get(id);
    if (!budget) return;
    this.byId.delete(id);
    budget.close();
  }

  get size(): number {
    return this.byId.size;
  }
}

/** The registry of this process: budgets survive a redeploy, not a restart. */
export const budgets = new BudgetRegistry();
