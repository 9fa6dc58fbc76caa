/**
 * The approval store: where approval tokens are requested, decided and
 * consumed. Three implementations: {@link layerMemory} (process memory),
 * {@link layerSqlite} (a SQLite file through Node's built-in `node:sqlite`,
 * so approvals survive a restart) and {@link layerSql} (any database behind
 * `effect/sql`'s `SqlClient`, such as Postgres through `@effect/sql-pg`,
 * shared by several processes). All three keep the same rules, built on
 * their storage by {@link make}:
 *
 * - A token is an unguessable id (192 random bits from `node:crypto`,
 *   base64url) bound to an agent id, an action (and tool) and the SHA-256 of
 *   the canonical JSON of the call's raw arguments. It expires on Effect's
 *   `Clock`.
 * - It is decided once, ever: the first decision recorded stands (of two
 *   deciders racing, one records); the same decision again is that
 *   decision; any other is refused with `check: "decided"` and the message
 *   `"already decided: approved by alice"` (see `Decision`). A decision may
 *   name the call it was shown for (its binding): a token bound to another
 *   call is refused.
 * - It is single-use: only a fully matching `consume` burns it, atomically
 *   (of two concurrent uses, one wins). The same call run again — the same
 *   binding and the same idempotency key — is let through: a call cut off
 *   by a crash after it used its token proceeds when it is run again.
 * - A call asked for again while its token is still pending gets that same
 *   token, so refusals repeated by a client do not fill the store. A token
 *   belongs to who asked for it — its scope, the turn (or durable run) and
 *   the call — never to a call id alone, which a provider repeats across
 *   turns.
 * - It records what a person needs to decide it (the path of agents the
 *   call came through, its arguments as they passed the agent's redaction
 *   boundary, the reason), and the store lists the pending ones (`list`).
 *   Tables written by an earlier version get the columns added since when
 *   they are opened.
 * - The store boundary (`StoreBoundary`): text the store cannot hold (a NUL,
 *   a lone surrogate, past its cap) is refused as VALIDATION naming the
 *   field, in every store alike; a store that cannot be reached is TRANSIENT
 *   naming it; a stored row that does not decode is EXECUTION. Never a
 *   defect.
 *
 * @example
 * ```ts
 * import { Agent, ApprovalStore, type Role } from "@rolecraft/core"
 * import { Effect } from "effect"
 *
 * declare const Booking: Role.Any
 *
 * // approvals kept in a SQLite file: a token approved before a restart is still approved after it
 * const program = Agent.make({ id: "planner", roles: [Booking] }).pipe(
 *   Effect.scoped,
 *   Effect.provide(ApprovalStore.layerSqlite({ filename: "approvals.db" }))
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import type { DatabaseSync } from "node:sqlite"
import type * as SqlClient from "effect/sql/SqlClient"
import type { ApprovalCheck } from "./ActionError.ts"
import { write } from "./internal/json.ts"
import * as Memory from "./internal/approvals/memory.ts"
import * as Row from "./internal/approvals/row.ts"
import * as Rules from "./internal/approvals/rules.ts"
import * as Sql from "./internal/approvals/sql.ts"
import * as Sqlite from "./internal/approvals/sqlite.ts"
import type { Service, Storage } from "./internal/approvals/storage.ts"
import type { StoreError } from "./StoreBoundary.ts"

// The model of a token, the storage contract and the store's refusals live with the stores that implement them.
export { ApprovalTokenError } from "./internal/approvals/storage.ts"
export type {
  Binding,
  ConsumeOptions,
  Decided,
  ListOptions,
  ListQuery,
  PendingToken,
  RequestOptions,
  Scope,
  Service,
  Status,
  Storage,
  Token
} from "./internal/approvals/storage.ts"

// node:crypto takes tens of milliseconds to load: it is loaded by the first digest, not at import
// (Node keeps the module once loaded).
const nodeCrypto = () => process.getBuiltinModule("node:crypto")

/**
 * The approval store service.
 *
 * - `request(binding, reason, ttl?, options?)`: the id of a pending token
 *   for the call `binding` describes, expiring after `ttl` (default 15
 *   minutes), recording its `options.scope` (the turn or run, and the call,
 *   that asks) and what a person deciding it is shown (`options.agents`,
 *   `options.arguments`). While a token requested with the same binding,
 *   reason, ttl and scope is still pending and unexpired, that token's id is
 *   returned instead of a new one (within one store value, for up to 10,000
 *   calls at once); the same call of two turns gets two tokens.
 * - `approve(tokenId, approver, binding?)`: approves a pending token. The
 *   same approval again answers the token as it is; a token decided
 *   otherwise (rejected, or approved by another approver) fails
 *   `ApprovalTokenError` with `check: "decided"` ("already decided:
 *   rejected by bob: too expensive"); an unknown or expired token fails with
 *   that check. With `binding` (the call the approver was shown), a token
 *   bound to another agent, action or arguments is refused with that check
 *   and stays as it was.
 * - `reject(tokenId, approver, why, binding?)`: the same for a rejection.
 * - `consume(tokenId, binding, options?)`: burns an approved, unexpired,
 *   unused token whose binding matches in full, atomically, recording the
 *   SHA-256 of `options.key` (the call's idempotency key) when given; any
 *   other case fails with the check that refused and leaves the token as it
 *   was. A token already used by a call with the same key and binding is
 *   answered as it is (expired or not since): that call is being run again.
 * - `get(tokenId)`: the token, if the store knows it.
 * - `list(options?)`: the pending, unexpired tokens (`PendingToken`: each
 *   under its `key`, the SHA-256 of its id, with its binding, scope, path of
 *   agents, shown arguments, reason and times), of an agent and a scope
 *   when given, the longest waiting first, at most `options.limit` (1 to
 *   1,000, default 100; else VALIDATION naming `limit`).
 *
 * Each fails with `StoreBoundary.StoreError`: VALIDATION when a text
 * cannot be stored (a NUL or a lone surrogate in an approver, a reason, an
 * agent id, an action or tool name; text past 1,024 characters for a name,
 * 65,536 for a reason), TRANSIENT when the storage cannot be read or
 * written (a database stopped, a closed connection; for SQLite, still
 * locked by another process after the store's busy wait), EXECUTION when a
 * stored token does not decode. A token id that no store could have issued
 * is `"unknown"`.
 *
 * @category services
 * @since 0.1.0
 */
export class ApprovalStore extends Context.Service<ApprovalStore, Service>()("@rolecraft/core/ApprovalStore") {}

/**
 * The default time to live of a requested token: 15 minutes.
 *
 * @category constants
 * @since 0.1.0
 */
export const defaultTtl: Duration.Duration = Rules.defaultTtl

/**
 * The canonical JSON of a value: the JSON a tool's result is written as
 * (`ToolContent.success`), with object keys sorted by code unit at every
 * depth — no whitespace, `undefined`, functions and symbols left out of
 * objects (and `null` in arrays), non-finite numbers as `null`, bigints as
 * decimal strings, `toJSON` honoured (a `Date` is its ISO string), a `Map` an
 * object of its entries, a `Set` an array. Throws `TypeError` on a cycle, or
 * when the value nests more than 1,000 objects or arrays deep.
 *
 * @category getters
 * @since 0.1.0
 */
export const canonicalJson = (value: unknown): string => {
  const written = write(value, { sortKeys: true })
  if (Result.isFailure(written)) throw new TypeError(`canonicalJson: ${written.failure.message}`)
  return written.success
}

/**
 * The SHA-256 (lower-case hex) of the {@link canonicalJson} of a value: the
 * `argumentsDigest` of a {@link Binding}. Throws `TypeError` on a cycle.
 *
 * @category getters
 * @since 0.1.0
 */
export const digest = (value: unknown): string => nodeCrypto().hash("sha256", canonicalJson(value), "hex")

/**
 * A fresh token id: 24 random bytes from `node:crypto`, base64url (32
 * characters, 192 bits).
 *
 * @category constructors
 * @since 0.1.0
 */
export const newTokenId: () => string = Rules.newTokenId

/**
 * The key a token is listed under (`PendingToken.key`): the SHA-256
 * (lower-case hex) of its id, which is also what the SQLite and SQL stores
 * key its row by. `keyOf(pendingCall.pendingTokenId)` finds a paused turn's
 * (or a durable run's) pending call in a listing.
 *
 * @category getters
 * @since 0.3.0
 */
export const keyOf: (tokenId: string) => string = Row.keyOf

/**
 * The message of a refusal by `check`, for callers that report it.
 *
 * @category getters
 * @since 0.1.0
 */
export const describeCheck: (check: ApprovalCheck) => string = Rules.describeCheck

/**
 * Builds the store's rules (the store boundary's text checks, expiry on
 * `Clock`, binding checks, decisions once, single use, one live pending
 * token per call asked for again) on a {@link Storage}.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make: (storage: Storage) => Service = Rules.make

/**
 * A {@link Storage} in process memory. Every operation is synchronous, so a
 * `transition` is atomic within the process. Expired tokens are swept when
 * the store has grown past 10,000 tokens (and then past twice its size after
 * the last sweep); a swept token is then refused as `"unknown"`.
 *
 * @category storage
 * @since 0.1.0
 */
export const memoryStorage: () => Storage = Memory.storage

/**
 * A fresh in-memory store (what an agent uses when no `ApprovalStore` is
 * provided). Tokens live as long as the store value.
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeMemory = (): ApprovalStore["Service"] => make(memoryStorage())

/**
 * An in-memory store as a layer; each build of the layer is a fresh store.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ApprovalStore } from "@rolecraft/core"
 *
 * declare const program: Effect.Effect<void, never, ApprovalStore.ApprovalStore>
 * const runnable = program.pipe(Effect.provide(ApprovalStore.layerMemory))
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layerMemory: Layer.Layer<ApprovalStore> = Layer.sync(ApprovalStore, makeMemory)

/**
 * How long an operation of the SQLite store waits for a lock in all (on
 * Effect's scheduler) before it fails: 5000 milliseconds.
 *
 * @category storage
 * @since 0.1.0
 */
export const defaultBusyTimeout = Sqlite.defaultBusyTimeout

/**
 * A {@link Storage} on an open `node:sqlite` database (the table
 * `rolecraft_approval_tokens` is created if missing). `transition` is one
 * conditional `UPDATE`, atomic across processes sharing the file. While the
 * database is locked by another connection, each operation retries on
 * Effect's scheduler for up to `busyTimeout` milliseconds (default
 * {@link defaultBusyTimeout}) then fails TRANSIENT (`StoreError`). `journal:
 * "wal"` switches the file to write-ahead logging (what
 * {@link layerSqlite} does). Throws when the table cannot be created.
 *
 * @category storage
 * @since 0.1.0
 */
export const sqliteStorage: (
  database: DatabaseSync,
  options?: { readonly busyTimeout?: number | undefined; readonly journal?: "wal" | undefined }
) => Storage = Sqlite.storage

/**
 * A durable store in a SQLite file through Node's built-in `node:sqlite` (no
 * dependency): tokens survive a restart of the process. The database is
 * opened when the layer is built and closed when its scope closes; `filename`
 * may be `":memory:"`. When another connection holds the database locked,
 * an operation waits up to `busyTimeout` milliseconds (default 5000) on
 * Effect's scheduler — the driver's own blocking wait is kept to 10 ms per
 * try, so timers and other fibers go on meanwhile — then fails
 * a TRANSIENT `StoreError` (TRANSIENT for the call that needed the token).
 * The file is switched to write-ahead logging (`journal_mode = WAL`), so
 * processes sharing it block each other less.
 *
 * Fails with a TRANSIENT `StoreError` when the file cannot be opened or is not
 * a database.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ApprovalStore } from "@rolecraft/core"
 *
 * const durable = ApprovalStore.layerSqlite({ filename: "approvals.db" })
 * const withApprovals = <A, E, R>(program: Effect.Effect<A, E, R>) => Effect.provide(program, durable)
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSqlite = (options: {
  readonly filename: string
  readonly busyTimeout?: number | undefined
}): Layer.Layer<ApprovalStore, StoreError> => Layer.effect(ApprovalStore, Effect.map(Sqlite.open(options), make))

/**
 * A {@link Storage} over `effect/sql`'s `SqlClient` (the table
 * `rolecraft_approval_tokens` is created if missing, with portable SQL).
 * Rows are keyed by the SHA-256 of the token id, like the SQLite store, so the
 * database holds no usable token. `transition` is one conditional
 * `UPDATE … WHERE key = … AND status = … RETURNING key`, atomic across every
 * process sharing the database. The client's name transforms are bypassed.
 * Fails with a TRANSIENT `StoreError` when the table cannot be created.
 *
 * @category storage
 * @since 0.1.0
 */
export const sqlStorage: Effect.Effect<Storage, StoreError, SqlClient.SqlClient> = Sql.storage

/**
 * A durable store in any database behind `effect/sql`'s `SqlClient`, shared by
 * every process that reaches it: with Postgres (`@effect/sql-pg`), a token
 * requested by one process can be approved by a second and consumed by a
 * third, and a consume is single-use across all of them. The table
 * `rolecraft_approval_tokens` is created if missing; rows are keyed by the
 * SHA-256 of the token id, so the database holds no usable token.
 *
 * Fails with a TRANSIENT `StoreError` when the table cannot be created;
 * afterwards, a database that cannot be reached (stopped, restarted, a
 * connection closed) is a TRANSIENT `StoreError` naming the store, and the
 * next operation reconnects through the client's pool.
 *
 * @example
 * ```ts
 * import { PgClient } from "@effect/sql-pg"
 * import { Layer, Redacted } from "effect"
 * import { ApprovalStore } from "@rolecraft/core"
 *
 * const approvals = ApprovalStore.layerSql.pipe(
 *   Layer.provide(PgClient.layer({ url: Redacted.make("postgres://app@db.internal/app") }))
 * )
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSql: Layer.Layer<ApprovalStore, StoreError, SqlClient.SqlClient> = Layer.effect(
  ApprovalStore,
  Effect.map(sqlStorage, make)
)
