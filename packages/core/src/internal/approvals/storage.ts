/**
 * What an approval store keeps and how it fails: a token (its binding,
 * scope, what a person is shown of its call, status and times), the storage
 * contract every store implements — insert, find, an atomic compare-and-set
 * `transition` and the listing of pending tokens — the operations of the
 * service built on it, and a refusal of a token. `ApprovalStore.ts` builds
 * the service's rules on any such storage and exports these names.
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { ApprovalCheck } from "../../ActionError.ts"
import type { Decision } from "../../Decision.ts"
import type { StoreError } from "../../StoreBoundary.ts"
import { expected } from "../expectedError.ts"

/**
 * What a token is bound to: the agent's id, the action's name, the MCP tool
 * name for mcpTool actions, `ApprovalStore.digest` of the raw arguments
 * without the token (for mcpTool actions, of `{ tool, arguments }`), and
 * `definitionDigest`, the SHA-256 of the definition of what the call runs
 * (an MCP tool's definition) when it is known. A binding without a
 * `definitionDigest` matches only one without.
 *
 * @category models
 * @since 0.1.0
 */
export interface Binding {
  readonly agentId: string
  readonly action: string
  readonly tool?: string | undefined
  readonly argumentsDigest: string
  readonly definitionDigest?: string | undefined
}

/**
 * Who asked for a token: `turn` is the id of the chat turn whose call it is
 * (`Chat.ChatOptions.turnId`: a durable run's turn is its run id), or the
 * correlation id of a direct `ActionRequest`; `call` is the model's tool
 * call id within that turn. A provider's call ids repeat across turns
 * (`call_1` in every one), so a scope is never the call id alone.
 *
 * @category models
 * @since 0.3.0
 */
export interface Scope {
  readonly turn: string
  readonly call?: string | undefined
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
 * consumed it — when that call had one. What it was requested with, when
 * the requester said (a token written by Rolecraft 0.2.0 has none of them):
 * its `scope`, and what a person deciding it is shown — `agents`, the path
 * of agents the call came through (outermost first, ending with
 * `binding.agentId`) and `arguments`, the call's arguments as JSON text as
 * they passed the agent's redaction boundary (every secret the agent knows
 * replaced, cut to 8,192 characters).
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
  readonly scope?: Scope | undefined
  readonly agents?: ReadonlyArray<string> | undefined
  readonly arguments?: string | undefined
}

/**
 * A pending token as the store lists it (see `ApprovalStore`'s `list`):
 * `key` is the SHA-256 (lower-case hex) of its id — what the SQL stores keep
 * instead of the id, so a listing hands out no usable token;
 * `ApprovalStore.keyOf(pendingTokenId)` of a pending call (a paused turn's,
 * a durable run's) finds it — then its binding, scope, what a person is
 * shown of the call (`agents`: `[binding.agentId]` for a token that did not
 * record its path; `arguments`, absent when not recorded), the reason, and
 * when it was requested and expires (epoch milliseconds).
 *
 * @category models
 * @since 0.3.0
 */
export interface PendingToken {
  readonly key: string
  readonly binding: Binding
  readonly scope: Scope | undefined
  readonly agents: ReadonlyArray<string>
  readonly arguments: string | undefined
  readonly reason: string
  readonly requestedAt: number
  readonly expiresAt: number
}

/**
 * Which pending tokens to list: those of the agent `agentId`, of a `scope`
 * (its `turn`, and the `call` when given), at most `limit` of them (an
 * integer from 1 to 1,000, default 100), the longest waiting first.
 *
 * @category models
 * @since 0.3.0
 */
export interface ListOptions {
  readonly agentId?: string | undefined
  readonly scope?: Scope | undefined
  readonly limit?: number | undefined
}

/**
 * What a storage is asked to list: pending tokens unexpired at `now`, of the
 * agent and scope when given, oldest request first (then by key), at most
 * `limit`.
 *
 * @category models
 * @since 0.3.0
 */
export interface ListQuery {
  readonly agentId: string | undefined
  readonly scope: Scope | undefined
  readonly limit: number
  readonly now: number
}

/**
 * What a store implementation keeps. `insert` adds a new token; `find` reads
 * one; `transition` is a compare-and-set: it writes `next` only when the
 * stored status is still `from`, and says whether it did; `list` answers a
 * {@link ListQuery}. `ApprovalStore.make`
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
  readonly list: (query: ListQuery) => Effect.Effect<ReadonlyArray<PendingToken>, StoreError>
  /**
   * The token listed under `key` (`PendingToken.key`), its `id` unknown
   * (`""`) to a storage that keeps only keys; a storage without it cannot
   * decide a listed token (`Service.decide`).
   *
   * @since 0.3.0
   */
  readonly findListed?: ((key: string) => Effect.Effect<Token | undefined, StoreError>) | undefined
  /**
   * `transition` of the token listed under `key`.
   *
   * @since 0.3.0
   */
  readonly transitionListed?:
    | ((key: string, from: Status, next: Token) => Effect.Effect<boolean, StoreError>)
    | undefined
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
 * Options of a request: `scope` says who asks (a chat turn and its call, a
 * durable run and its call, a request's correlation id): requests of the
 * same binding, reason, time to live and scope share one live pending token,
 * and without a scope every request of that binding does. `agents` and
 * `arguments` are what a person deciding the token is shown (see
 * {@link Token}); the store records them as given, so the caller redacts
 * `arguments` first.
 *
 * @category models
 * @since 0.2.0
 */
export interface RequestOptions {
  readonly scope?: Scope | undefined
  readonly agents?: ReadonlyArray<string> | undefined
  readonly arguments?: string | undefined
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
 * What a decision on a listed token found: the `decision` now recorded,
 * whether it had been recorded before (`repeated`: the same decision made
 * again, which changed nothing) and the token's `status` now (`"used"` once
 * the approved call consumed it).
 *
 * @category models
 * @since 0.3.0
 */
export interface Decided {
  readonly decision: Decision
  readonly repeated: boolean
  readonly status: Status
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
  readonly list: (options?: ListOptions | undefined) => Effect.Effect<ReadonlyArray<PendingToken>, StoreError>
  /**
   * Records `decision` on the pending token listed under `key` (what a
   * listing gives: a person deciding from a listing never holds the token
   * itself, so can approve a call but not make it). The same rules as
   * `approve` and `reject`: decided once — the same decision again answers
   * as it did, another is refused as `"decided"` naming who decided — and
   * an expired token is refused as `"expired"`, an unknown key as
   * `"unknown"`. Answers the decision now recorded (see {@link Decided}).
   * A store over a storage without `findListed` and `transitionListed`
   * fails with EXECUTION.
   *
   * @since 0.3.0
   */
  readonly decide: (key: string, decision: Decision) => Effect.Effect<Decided, ApprovalTokenError | StoreError>
}
