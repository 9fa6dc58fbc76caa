/**
 * A named predicate. `rule` is the message reported when `check` returns
 * `false` (or throws).
 *
 * @since 0.1.0
 */
export interface Condition<In extends ReadonlyArray<unknown>> {
  readonly rule: string
  readonly check: (...input: In) => boolean
}

/**
 * What `Action.contract` attaches to an action.
 *
 * - `pre`: over the converted arguments and the role's state (step 5).
 * - `invariants`: over the arguments and the role's state, checked before
 *   the run (step 5) and again after it (step 9).
 * - `post`: over the result, the arguments and the role's state (step 9).
 * - `checkState`: also check the role's state invariants after the run
 *   (step 9). Default `false`.
 *
 * Every failure is `ContractViolation` (CONTRACT) naming the rule.
 *
 * @since 0.1.0
 */
export interface Policy<Args, A = unknown, S = unknown> {
  readonly pre?: ReadonlyArray<Condition<[args: Args, state: S]>> | undefined
  readonly invariants?: ReadonlyArray<Condition<[args: Args, state: S]>> | undefined
  readonly post?: ReadonlyArray<Condition<[result: A, args: Args, state: S]>> | undefined
  readonly checkState?: boolean | undefined
}
