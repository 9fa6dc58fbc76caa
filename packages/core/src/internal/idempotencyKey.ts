/**
 * The idempotency key of the call being run: a reference in the fiber's context, set by whoever runs the
 * call and knows a key that stays the same on every attempt of it (a durable run sets its run id and tool call
 * id). Read by the approval step (consuming a token is idempotent for the same key), by a local action's
 * context, by a webService action that sends it as a header, and by an mcpTool action's `_meta`. `Chat`
 * exports it as `Chat.IdempotencyKey`.
 */
import * as Context from "effect/Context"
import * as Fiber from "effect/Fiber"

/** The key of the call being run, `undefined` when its caller gave none. */
export const IdempotencyKey: Context.Reference<string | undefined> = Context.Reference<string | undefined>(
  "@rolecraft/core/Chat/IdempotencyKey",
  { defaultValue: () => undefined }
)

/** The key of the current fiber's call, read synchronously (`undefined` outside a fiber). */
export const current = (): string | undefined => Fiber.getCurrent()?.getRef(IdempotencyKey)

/** The `_meta` key under which an mcpTool action sends the key (see `McpClient.idempotencyKeyMeta`). */
export const idempotencyKeyMeta = "rolecraft/idempotencyKey" as const
