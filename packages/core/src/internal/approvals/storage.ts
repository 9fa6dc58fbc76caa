/**
 * What an approval store keeps and how it fails: a token (its binding,
 * status and times), the storage contract every store implements — insert,
 * find, and an atomic compare-and-set `transition` — the operations of the
 * service built on it, and a refusal of a token. `ApprovalStore.ts` builds
 * the service's rules on any such storage and exports these names.
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { ApprovalCheck } from "../../ActionError.ts"
import type { StoreError } from "../../StoreBoundary.ts"
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
 * `rejection` (the approver's reason) once rejected, `usedAt` once consumed,
 * and `usedKey` — the SHA-256 (hex) of the idempotency key of the call that
 * consumed it — when that call had one.
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
  readonly usedKey?: string | undefined
}

/**
 * What a store implementation keeps. `insert` adds a new token; `find` reads
 * one; `transition` is a compare-and-set: it writes `next` only when the
 * stored status is still `from`, and says whether it did. `ApprovalStore.make`
 * builds the service's rules on top — the text checks of the store boundary,
 * expiry, binding checks, decisions once, single use — so a storage only has
 * to make `transition` atomic. Each fails with a `StoreBoundary.StoreError`:
 * TRANSIENT when the storage cannot be read or written, EXECUTION when a
 * stored token does not decode. `name` names the store in messages (default
 * `"the approval store"`).
 *
 * @category models
 * @since 0.1.0
 */
export interface Storage {
  readonly name?: string | undefined
  readonly insert: (token: Token) => Effect.Effect<void, StoreError>
  readonly find: (tokenId: string) => Effect.Effect<Token | undefined, StoreError>
  readonly transition: (tokenId: string, from: Status, next: Token) => Effect.Effect<boolean, StoreError>
}

/**
 * A store operation refused a token. `check` says why: `"unknown"` (no such
 * token), `"expired"`, `"used"`, `"rejected"`, `"pending"` (not approved yet,
 * from `consume`), a binding mismatch — `"agent"`, `"action"` (action or
 * tool), `"arguments"` — or `"decided"`: a decision on a token already
 * decided otherwise (the message says `"already decided: approved by …"`).
 * The message never holds the token id.
 *
 * @category errors
 * @since 0.1.0
 */
export class ApprovalTokenError extends expected(
  Schema.TaggedError<ApprovalTokenError>()("ApprovalTokenError", {
    check: ApprovalCheck,
    message: Schema.String
  })
) {}

/**
 * Options of a request: `scope` says who asks (a chat turn's tool call id, a
 * client's session). Requests of the same binding, reason, time to live and
 * scope share one live pending token; without a scope, every request of
 * that binding does.
 *
 * @category models
 * @since 0.2.0
 */
export interface RequestOptions {
  readonly scope?: string | undefined
}

/**
 * Options of a consume: `key` is the idempotency key of the call that
 * consumes the token (see `IdempotencyKey.IdempotencyKey`). A token used by a call
 * with a key can be consumed again by a call with the same key and the same
 * binding: the same call run again (after a crash) proceeds.
 *
 * @category models
 * @since 0.2.0
 */
export interface ConsumeOptions {
  readonly key?: string | undefined
}

/**
 * The operations of an approval store (see `ApprovalStore.ApprovalStore`).
 *
 * @category models
 * @since 0.2.0
 */
export interface Service {
  readonly request: (
    binding: Binding,
    reason: string,
    ttl?: Duration.Input | undefined,
    options?: RequestOptions | undefined
  ) => Effect.Effect<string, StoreError>
  readonly approve: (
    tokenId: string,
    approver: string,
    binding?: Binding | undefined
  ) => Effect.Effect<Token, ApprovalTokenError | StoreError>
  readonly reject: (
    tokenId: string,
    approver: string,
    why: string,
    binding?: Binding | undefined
  ) => Effect.Effect<Token, ApprovalTokenError | StoreError>
  readonly consume: (
    tokenId: string,
    binding: Binding,
    options?: ConsumeOptions | undefined
  ) => Effect.Effect<Token, ApprovalTokenError | StoreError>
  readonly get: (tokenId: string) => Effect.Effect<Option.Option<Token>, StoreError>
}
