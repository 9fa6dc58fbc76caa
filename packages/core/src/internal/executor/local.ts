/**
 * The local executor: the action's own function, called with the arguments
 * and the call's context (its `signal` aborted when the call is
 * interrupted, its `idempotencyKey` the call's, if any); whatever it
 * returns — a value, a Promise or an Effect — is the result, and a throw, a
 * rejection or a failure that is not an `ActionError` is EXECUTION.
 */
import type * as Effect from "effect/Effect"
import type * as Action from "../../Action.ts"
import type { ActionError } from "../../ActionError.ts"
import * as Callback from "../callback.ts"
import * as IdempotencyKey from "../idempotencyKey.ts"
import type { Attempt } from "./runtime.ts"

/**
 * One attempt of a local action. With `attempt.now` (nothing repeats, delays
 * or bounds it) the function is called here, so a plain value comes back as
 * a settled `Exit`.
 */
export const run = (attempt: Attempt<Action.Local<any, any, any>>): Effect.Effect<unknown, ActionError, any> =>
  (attempt.now === true ? Callback.fromReturnedNow : Callback.fromReturned)(attempt.name, "run", (signal) =>
    attempt.action.run(attempt.args, { ...attempt.context, signal, idempotencyKey: IdempotencyKey.current() })
  )
