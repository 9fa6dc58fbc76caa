/**
 * What an approval store keeps and how its storage fails: a token (its
 * binding, status and times) and the storage contract every store
 * implements — insert, find, and an atomic compare-and-set `transition`.
 * `ApprovalStore.ts` builds the service's rules on any such storage and
 * exports these names.
 */
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { expected } from "../expectedError.ts"

/**
 * What a token is bound to: the agent's id, the action's name, the MCP tool
 * name for mcpTool actions, and `ApprovalStore.digest` of the raw arguments without
 * the token (for mcpTool actions, of `{ tool, arguments }`).
 *
 * @category models
 * @since 0.1.0
 */
export interface Binding {
  readonly agentId: string
  readonly action: string
  readonly tool?: string | undefined
  readonly argumentsDigest: string
}

/**
 * A token's decision state. Expiry is not a status: a token whose
 * `expiresAt` has passed is refused as `"expired"` whatever its status.
 *
 * @category models
 * @since 0.1.0
 */
export type Status = "pending" | "approved" | "rejected" | "used"

/**
 * A token as the store holds it. Times are epoch milliseconds on the store's
 * `Clock`. `approver` and `decidedAt` are set once approved or rejected,
 * `rejection` (the approver's reason) once rejected, `usedAt` once consumed.
 *
 * @category models
 * @since 0.1.0
 */
export interface Token {
  readonly id: string
  readonly binding: Binding
  readonly reason: string
  readonly status: Status
  readonly requestedAt: number
  readonly expiresAt: number
  readonly approver: string | undefined
  readonly decidedAt: number | undefined
  readonly rejection: string | undefined
  readonly usedAt: number | undefined
}

/**
 * The store could not be opened (a bad SQLite file name or a file that is not
 * a database), or could not read or write a token: the database stayed
 * locked by another connection for longer than the store waits, or the
 * storage failed. The pipeline reports it as TRANSIENT (retryable).
 *
 * @category errors
 * @since 0.1.0
 */
export class ApprovalStorageError extends expected(
  Schema.TaggedError<ApprovalStorageError>()("ApprovalStorageError", {
    message: Schema.String,
    cause: Schema.optionalKey(Schema.Defect())
  })
) {}

/**
 * What a store implementation keeps. `insert` adds a new token; `find` reads
 * one; `transition` is a compare-and-set: it writes `next` only when the
 * stored status is still `from`, and says whether it did. `ApprovalStore.make` builds
 * the service's rules on top, so a storage only has to make `transition`
 * atomic. Each fails with `ApprovalStorageError` when the storage cannot be
 * read or written.
 *
 * @category models
 * @since 0.1.0
 */
export interface Storage {
  readonly insert: (token: Token) => Effect.Effect<void, ApprovalStorageError>
  readonly find: (tokenId: string) => Effect.Effect<Token | undefined, ApprovalStorageError>
  readonly transition: (tokenId: string, from: Status, next: Token) => Effect.Effect<boolean, ApprovalStorageError>
}
