/**
 * The role's hooks in the pipeline: `before` (step 3) may rewrite a call's raw arguments
 * before the input guardrail and their conversion; `after` (step 10) runs on a success, its
 * return value ignored. A hook that throws or fails is EXECUTION unless it failed with an
 * `ActionError`.
 */
import * as Effect from "effect/Effect"
import type { ActionError } from "../../ActionError.ts"
import { ValidationError } from "../../ActionError.ts"
import * as Callback from "../callback.ts"
import type * as Role from "../../Role.ts"

type Args = Readonly<Record<string, unknown>>

/**
 * Step 3: the role's `before` hook, which may change the arguments. A hook
 * that throws or fails is EXECUTION unless it failed with an `ActionError`;
 * one that returns something other than an object is VALIDATION.
 *
 * @since 0.1.0
 */
export const before = (hooks: Role.Hooks, action: string, args: Args): Effect.Effect<Args, ActionError> => {
  const hook = hooks.before
  if (hook === undefined) return Effect.succeed(args)
  return Effect.flatMap(
    Callback.fromReturned<unknown>(action, "before hook", () => hook(action, args)),
    (changed) =>
      typeof changed === "object" && changed !== null && !Array.isArray(changed)
        ? Effect.succeed(changed as Args)
        : Effect.fail(
            new ValidationError({
              action,
              message: `${action}: the before hook must return the arguments as an object`,
              issues: [{ path: "", message: "the before hook returned no arguments object" }]
            })
          )
  )
}

/**
 * Step 10: the role's `after` hook; it runs only on success and its return
 * value is ignored. A failing hook is EXECUTION unless it failed with an
 * `ActionError`.
 *
 * @since 0.1.0
 */
export const after = (
  hooks: Role.Hooks,
  action: string,
  args: Args,
  result: unknown
): Effect.Effect<void, ActionError> => {
  const hook = hooks.after
  if (hook === undefined) return Effect.void
  return Effect.asVoid(Callback.fromReturned(action, "after hook", () => hook(action, args, result)))
}
