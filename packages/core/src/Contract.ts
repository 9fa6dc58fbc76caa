/**
 * Contracts: preconditions and invariants before the
 * run, postconditions and invariants after it, and the role's state
 * invariants when `checkState` asks for them.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { ContractViolation } from "./ActionError.ts"

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
 * - `pre`: over the converted arguments and the role's state (step 5).
 * - `invariants`: over the arguments and the role's state, checked before
 *   the run (step 5) and again after it (step 9).
 * - `post`: over the result, the arguments and the role's state (step 9).
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

const holds = <In extends ReadonlyArray<unknown>>(condition: Condition<In>, input: In): boolean => {
  try {
    return condition.check(...input) === true
  } catch {
    return false
  }
}

const checkAll = <In extends ReadonlyArray<unknown>>(
  action: string,
  stage: ContractViolation["stage"],
  conditions: ReadonlyArray<Condition<In>> | undefined,
  input: In
): Effect.Effect<void, ContractViolation> => {
  if (conditions === undefined) return Effect.void
  for (const condition of conditions) {
    if (!holds(condition, input)) {
      return Effect.fail(
        new ContractViolation({
          action,
          stage,
          rule: condition.rule,
          message: `${action}: ${stageLabel[stage]} failed: ${condition.rule}`
        })
      )
    }
  }
  return Effect.void
}

const stageLabel: Record<ContractViolation["stage"], string> = {
  pre: "precondition",
  post: "postcondition",
  invariant: "invariant",
  state: "state invariant"
}

/**
 * Step 5: preconditions, then invariants.
 *
 * @since 0.1.0
 */
export const checkPre = <Args, S>(
  action: string,
  policy: Policy<Args, unknown, S> | undefined,
  args: Args,
  state: S
): Effect.Effect<void, ContractViolation> =>
  policy === undefined
    ? Effect.void
    : checkAll(action, "pre", policy.pre, [args, state]).pipe(
        Effect.andThen(checkAll(action, "invariant", policy.invariants, [args, state]))
      )

/**
 * Step 9: postconditions, then invariants, then — when `checkState` — the
 * role's state invariants.
 *
 * @since 0.1.0
 */
export const checkPost = <Args, A, S>(
  action: string,
  policy: Policy<Args, A, S> | undefined,
  result: A,
  args: Args,
  state: S,
  stateInvariants: ReadonlyArray<Condition<[state: S]>> | undefined
): Effect.Effect<void, ContractViolation> =>
  policy === undefined
    ? Effect.void
    : checkAll(action, "post", policy.post, [result, args, state]).pipe(
        Effect.andThen(checkAll(action, "invariant", policy.invariants, [args, state])),
        Effect.andThen(policy.checkState === true ? checkAll(action, "state", stateInvariants, [state]) : Effect.void)
      )
