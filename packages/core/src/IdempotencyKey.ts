/**
 * The idempotency key of the call being run: a reference in the fiber's
 * context, set by whoever runs the call and knows a key that stays the same
 * on every attempt of it. Durable runs set it for each tool call of a turn
 * (the run id and the tool call id, `"run-1/call_1"`); anyone running a
 * chat turn or an action may set it the same way.
 *
 * @example
 * ```ts
 * import { Action, IdempotencyKey } from "@rolecraft/core"
 * import { Effect, Schema } from "effect"
 *
 * // a local action that charges a card once per key, however often the call is run
 * const charge = Action.local({
 *   description: "Charge the card",
 *   parameters: { cents: Schema.Int },
 *   run: ({ cents }) =>
 *     Effect.gen(function* () {
 *       const key = yield* IdempotencyKey.IdempotencyKey // or context.idempotencyKey
 *       return `charged ${cents} under ${key ?? "no key"}`
 *     })
 * })
 *
 * // the same call, run twice under one key
 * declare const run: Effect.Effect<unknown>
 * const once = Effect.provideService(run, IdempotencyKey.IdempotencyKey, "order-7/charge")
 * ```
 *
 * @since 0.3.0
 */
import * as Context from "effect/Context"

/**
 * The idempotency key of the call being run (`undefined` when its caller
 * gave none). It reaches the action in the form its kind understands:
 *
 * - a local action reads `context.idempotencyKey` (or
 *   `yield* IdempotencyKey.IdempotencyKey` in an Effect);
 * - a webService action with `idempotencyHeader` sends it as that header
 *   (`Idempotency-Key`);
 * - an mcpTool action sends it in the call's `_meta`, under
 *   `"rolecraft/idempotencyKey"` (`McpClient.idempotencyKeyMeta`).
 *
 * An action with side effects passes it on to the service that performs
 * them, so a call run twice takes effect once. Consuming an approval token
 * is idempotent for the same key: a call re-run after a crash proceeds with
 * its approval instead of being refused as `"used"`.
 *
 * @category services
 * @since 0.3.0
 */
export const IdempotencyKey: Context.Reference<string | undefined> = Context.Reference<string | undefined>(
  "@rolecraft/core/IdempotencyKey",
  { defaultValue: () => undefined }
)
