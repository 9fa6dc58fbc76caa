/**
 * Reading the idempotency key of the call being run (`IdempotencyKey.IdempotencyKey`, set by whoever runs the
 * call) where no Effect is at hand: by the approval step (consuming a token is idempotent for the same key), by a
 * local action's context, by a webService action that sends it as a header, and by an mcpTool action's `_meta`.
 */
import * as Fiber from "effect/Fiber"
import { IdempotencyKey } from "../IdempotencyKey.ts"

/** The key of the current fiber's call, read synchronously (`undefined` outside a fiber). */
export const current = (): string | undefined => Fiber.getCurrent()?.getRef(IdempotencyKey)

/** The `_meta` key under which an mcpTool action sends the key (see `McpClient.idempotencyKeyMeta`). */
export const idempotencyKeyMeta = "rolecraft/idempotencyKey" as const
