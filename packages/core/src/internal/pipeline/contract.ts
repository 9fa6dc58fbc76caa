/**
 * The contract steps of the pipeline: an action's preconditions, checked on the converted
 * arguments before it runs, and its postconditions, checked on its result; a condition that
 * is false or throws fails the call with CONTRACT naming the condition.
 */
import * as Effect from "effect/Effect"
import { ContractViolation } from "../../ActionError.ts"
import type { Condition, Policy } from "../../Contract.ts"

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
