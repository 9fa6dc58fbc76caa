/**
 * The approval store: where approval tokens are requested, decided and
 * consumed. Three implementations: {@link layerMemory} (process memory),
 * {@link layerSqlite} (a SQLite file through Node's built-in `node:sqlite`,
 * so approvals survive a restart) and {@link layerSql} (any database behind
 * `effect/sql`'s `SqlClient`, such as Postgres through `@effect/sql-pg`,
 * shared by several processes).
 *
 * A token is an unguessable id (192 random bits from `node:crypto`, base64url)
 * bound to an agent id, an action (and tool) and the SHA-256 of the canonical
 * JSON of the call's raw arguments. It expires on Effect's `Clock` and is
 * single-use: only a fully matching {@link ApprovalStore} `consume` burns it,
 * atomically (of two concurrent uses, one wins).
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { expected } from "./internal/expectedError.ts"
import type { DatabaseSync } from "node:sqlite"
import type * as SqlClient from "effect/sql/SqlClient"
import { ApprovalCheck } from "./ActionError.ts"
import { write } from "./internal/json.ts"
import * as Memory from "./internal/store/memory.ts"
import * as Sql from "./internal/store/sql.ts"
import * as Sqlite from "./internal/store/sqlite.ts"
import type { ApprovalStorageError, Binding, Status, Storage, Token } from "./internal/store/storage.ts"

// The model of a token, the storage contract and the storage's failure live with the stores that implement them.
export { ApprovalStorageError } from "./internal/store/storage.ts"
export type { Binding, Status, Storage, Token } from "./internal/store/storage.ts"

// node:crypto takes tens of milliseconds to load: it is loaded by the first digest or token, not at import
// (Node keeps the module once loaded).
const nodeCrypto = () => process.getBuiltinModule("node:crypto")

/**
 * A store operation refused a token. `check` says why: `"unknown"` (no such
 * token), `"expired"`, `"used"`, `"rejected"`, `"pending"` (not approved yet,
 * from `consume`), or a binding mismatch — `"agent"`, `"action"` (action or
 * tool), `"arguments"`. The message never holds the token id.
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
 * The approval store service.
 *
 * - `request(binding, reason, ttl?)`: records a pending token that expires
 *   after `ttl` (default 15 minutes) and returns its id.
 * - `approve(tokenId, approver)`: approves a pending token (approving an
 *   approved one again is a no-op); fails `ApprovalTokenError` when it is
 *   unknown, expired, used or rejected.
 * - `reject(tokenId, approver, why)`: rejects a pending or approved token;
 *   fails when it is unknown, expired, used or already rejected.
 * - `consume(tokenId, binding)`: burns an approved, unexpired, unused token
 *   whose binding matches in full, atomically; any other case fails with the
 *   check that refused and leaves the token as it was.
 * - `get(tokenId)`: the token, if the store knows it.
 *
 * `request` and `consume` fail with `ApprovalStorageError` when the storage
 * cannot be read or written (for SQLite: still locked by another process
 * after the store's busy wait); storage faults of `approve`, `reject` and
 * `get` are defects.
 *
 * @category services
 * @since 0.1.0
 */
export class ApprovalStore extends Context.Service<
  ApprovalStore,
  {
    readonly request: (
      binding: Binding,
      reason: string,
      ttl?: Duration.Input | undefined
    ) => Effect.Effect<string, ApprovalStorageError>
    readonly approve: (tokenId: string, approver: string) => Effect.Effect<Token, ApprovalTokenError>
    readonly reject: (tokenId: string, approver: string, why: string) => Effect.Effect<Token, ApprovalTokenError>
    readonly consume: (
      tokenId: string,
      binding: Binding
    ) => Effect.Effect<Token, ApprovalTokenError | ApprovalStorageError>
    readonly get: (tokenId: string) => Effect.Effect<Option.Option<Token>>
  }
>()("@rolecraft/core/ApprovalStore") {}

/**
 * The default time to live of a requested token: 15 minutes.
 *
 * @category constants
 * @since 0.1.0
 */
export const defaultTtl: Duration.Duration = Duration.minutes(15)

/**
 * The canonical JSON of a value: the JSON a tool's result is written as
 * (`ToolResult.success`), with object keys sorted by code unit at every
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
 * @since 0.1.0
 */
export const newTokenId = (): string => nodeCrypto().randomBytes(24).toString("base64url")

const refused = (check: ApprovalCheck, message: string) => new ApprovalTokenError({ check, message })

const refusal = (check: ApprovalCheck): Effect.Effect<never, ApprovalTokenError> =>
  Effect.fail(new ApprovalTokenError({ check, message: checkMessages[check] }))

/** Which check, if any, refuses consuming `token` for `binding` at `now`. */
const consumeCheck = (token: Token | undefined, binding: Binding, now: number): ApprovalCheck | undefined => {
  if (token === undefined) return "unknown"
  const bound = token.binding
  if (bound.agentId !== binding.agentId) return "agent"
  if (bound.action !== binding.action || (bound.tool ?? "") !== (binding.tool ?? "")) return "action"
  if (bound.argumentsDigest !== binding.argumentsDigest) return "arguments"
  if (token.status === "rejected") return "rejected"
  if (token.status === "used") return "used"
  if (now >= token.expiresAt) return "expired"
  if (token.status === "pending") return "pending"
  return undefined
}

const checkMessages: Record<ApprovalCheck, string> = {
  missing: "no approval token was given",
  unknown: "the approval token is unknown",
  pending: "the approval token has not been approved yet",
  rejected: "the approval token was rejected",
  expired: "the approval token has expired",
  used: "the approval token has already been used",
  agent: "the approval token was issued for another agent",
  action: "the approval token was issued for another action",
  arguments: "the approval token was issued for other arguments"
}

/**
 * The message of a refusal by `check`, for callers that report it.
 *
 * @category getters
 * @since 0.1.0
 */
export const describeCheck = (check: ApprovalCheck): string => checkMessages[check]

/**
 * Builds the store's rules (expiry on `Clock`, binding checks, single use)
 * on a {@link Storage}.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (storage: Storage): ApprovalStore["Service"] => {
  const defective = {
    find: (tokenId: string) => Effect.orDie(storage.find(tokenId)),
    transition: (tokenId: string, from: Status, next: Token) => Effect.orDie(storage.transition(tokenId, from, next))
  }
  const decide = (
    tokenId: string,
    what: "approve" | "reject",
    next: (token: Token, now: number) => Token
  ): Effect.Effect<Token, ApprovalTokenError> =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const storage = defective
      for (;;) {
        const token = yield* storage.find(tokenId)
        if (token === undefined) return yield* refused("unknown", checkMessages.unknown)
        if (token.status === "used") return yield* refused("used", checkMessages.used)
        if (token.status === "rejected") return yield* refused("rejected", checkMessages.rejected)
        if (now >= token.expiresAt) return yield* refused("expired", checkMessages.expired)
        if (what === "approve" && token.status === "approved") return token
        const updated = next(token, now)
        if (yield* storage.transition(tokenId, token.status, updated)) return updated
        // Another writer changed the token between find and transition: look again.
      }
    })

  return ApprovalStore.of({
    request: (binding, reason, ttl) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const id = newTokenId()
        const lifetime = ttl === undefined ? defaultTtl : Duration.fromInputUnsafe(ttl)
        yield* storage.insert({
          id,
          binding: {
            agentId: binding.agentId,
            action: binding.action,
            tool: binding.tool,
            argumentsDigest: binding.argumentsDigest
          },
          reason,
          status: "pending",
          requestedAt: now,
          expiresAt: now + Duration.toMillis(lifetime),
          approver: undefined,
          decidedAt: undefined,
          rejection: undefined,
          usedAt: undefined
        })
        return id
      }),
    approve: (tokenId, approver) =>
      decide(tokenId, "approve", (token, now) => ({ ...token, status: "approved", approver, decidedAt: now })),
    reject: (tokenId, approver, why) =>
      decide(tokenId, "reject", (token, now) => ({
        ...token,
        status: "rejected",
        approver,
        decidedAt: now,
        rejection: why
      })),
    consume: (tokenId, binding) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.flatMap(storage.find(tokenId), (token) => {
          const check = consumeCheck(token, binding, now)
          if (check !== undefined || token === undefined) return refusal(check ?? "unknown")
          const used: Token = { ...token, status: "used", usedAt: now }
          return Effect.flatMap(storage.transition(tokenId, "approved", used), (burnt) =>
            burnt
              ? Effect.succeed(used)
              : // Someone else consumed (or rejected) it first.
                Effect.flatMap(storage.find(tokenId), (after) => refusal(consumeCheck(after, binding, now) ?? "used"))
          )
        })
      ),
    get: (tokenId) => Effect.map(defective.find(tokenId), Option.fromUndefinedOr)
  })
}

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
 * {@link defaultBusyTimeout}) then fails `ApprovalStorageError`. `journal:
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
 * `ApprovalStorageError` (TRANSIENT for the call that needed the token).
 * The file is switched to write-ahead logging (`journal_mode = WAL`), so
 * processes sharing it block each other less.
 *
 * Fails with `ApprovalStorageError` when the file cannot be opened or is not
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
}): Layer.Layer<ApprovalStore, ApprovalStorageError> =>
  Layer.effect(ApprovalStore, Effect.map(Sqlite.open(options), make))

/**
 * A {@link Storage} over `effect/sql`'s `SqlClient` (the table
 * `rolecraft_approval_tokens` is created if missing, with portable SQL).
 * Rows are keyed by the SHA-256 of the token id, like the SQLite store, so the
 * database holds no usable token. `transition` is one conditional
 * `UPDATE … WHERE key = … AND status = … RETURNING key`, atomic across every
 * process sharing the database. The client's name transforms are bypassed.
 * Fails with `ApprovalStorageError` when the table cannot be created.
 *
 * @category storage
 * @since 0.1.0
 */
export const sqlStorage: Effect.Effect<Storage, ApprovalStorageError, SqlClient.SqlClient> = Sql.storage

/**
 * A durable store in any database behind `effect/sql`'s `SqlClient`, shared by
 * every process that reaches it: with Postgres (`@effect/sql-pg`), a token
 * requested by one process can be approved by a second and consumed by a
 * third, and a consume is single-use across all of them. The table
 * `rolecraft_approval_tokens` is created if missing; rows are keyed by the
 * SHA-256 of the token id, so the database holds no usable token.
 *
 * Fails with `ApprovalStorageError` when the table cannot be created; storage
 * faults afterwards are defects.
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
export const layerSql: Layer.Layer<ApprovalStore, ApprovalStorageError, SqlClient.SqlClient> = Layer.effect(
  ApprovalStore,
  Effect.map(sqlStorage, make)
)
