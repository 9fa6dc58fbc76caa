/**
 * Contracts: preconditions and invariants before the
 * run, postconditions and invariants after it, and the role's state
 * invariants when `checkState` asks for them.
 *
 * @example
 * ```ts
 * import { Action } from "@rolecraft/core"
 * import { Schema } from "effect"
 *
 * const charge = Action.local({
 *   description: "Charge an amount",
 *   parameters: { amount: Schema.Number },
 *   run: ({ amount }) => ({ charged: amount })
 * }).pipe(
 *   Action.contract({
 *     pre: [{ rule: "the amount is positive", check: (args: { amount: number }) => args.amount > 0 }]
 *   })
 * ) // a call with amount -5 fails with CONTRACT "the amount is positive"
 * ```
 *
 * @since 0.1.0
 */

/**
 * A named predicate. `rule` is the message reported when `check` returns
 * `false` (or throws).
 *
 * @category models
 * @since 0.1.0
 */
export interface Condition<In extends ReadonlyArray<unknown>> {
  readonly rule: string
  readonly check: (...input: In) => boolean
}

/**
 * What `Action.contract` attaches to an action.
 *
 * - `pre`: over the converted arguments and the role's state, before the run.
 * - `invariants`: over the arguments and the role's state, checked before
 *   the run and again after it.
 * - `post`: over the result, the arguments and the role's state, after the run.
 * - `checkState`: also check the role's state invariants after the run
 *   (after the postconditions). Default `false`.
 *
 * Every failure is `ContractViolation` (CONTRACT) naming the rule.
 *
 * @category models
 * @since 0.1.0
 */
export interface Policy<Args, A = unknown, S = unknown> {
  readonly pre?: ReadonlyArray<Condition<[args: Args, state: S]>> | undefined
  readonly invariants?: ReadonlyArray<Condition<[args: Args, state: S]>> | undefined
  readonly post?: ReadonlyArray<Condition<[result: A, args: Args, state: S]>> | undefined
  readonly checkState?: boolean | undefined
}
