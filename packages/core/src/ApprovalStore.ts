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
import type { DatabaseSync } from "node:sqlite"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { expected } from "./internal/expectedError.ts"
import type * as SqlClient from "effect/sql/SqlClient"
import { ApprovalCheck } from "./ActionError.ts"
import { maxDepth } from "./internal/json.ts"
import * as Lazy from "./internal/lazy.ts"

// node:crypto takes tens of milliseconds to load: it is loaded by the first digest or token, not at import
// (Node keeps the module once loaded).
const nodeCrypto = () => process.getBuiltinModule("node:crypto")

/**
 * What a token is bound to: the agent's id, the action's name, the MCP tool
 * name for mcpTool actions, and {@link digest} of the raw arguments without
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
 * The canonical JSON of a value: object keys sorted by code unit at every
 * depth, no whitespace, `undefined`, functions and symbols left out of
 * objects (and `null` in arrays), non-finite numbers as `null`, bigints as
 * decimal strings, `toJSON` honoured. Throws `TypeError` on a cycle, or when
 * the value nests more than 1,000 objects or arrays deep.
 *
 * @since 0.1.0
 */
export const canonicalJson = (value: unknown): string => write(value, []) ?? "null"

// `path` holds the objects being written (the ancestors), to find cycles; its length bounds the depth.
const write = (value: unknown, path: Array<object>): string | undefined => {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value)
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : "null"
    case "boolean":
      return value ? "true" : "false"
    case "bigint":
      return JSON.stringify(value.toString())
    case "object": {
      if (value === null) return "null"
      if (typeof (value as { toJSON?: unknown }).toJSON === "function") {
        return write((value as { toJSON: () => unknown }).toJSON(), path)
      }
      if (path.includes(value)) throw new TypeError("canonicalJson: the value has a cycle")
      if (path.length >= maxDepth)
        throw new TypeError(`canonicalJson: the value is nested more than ${maxDepth} levels deep`)
      path.push(value)
      let out: string
      if (Array.isArray(value)) {
        out = "["
        for (let i = 0; i < value.length; i++) out += `${i === 0 ? "" : ","}${write(value[i], path) ?? "null"}`
        out += "]"
      } else {
        const record = value as Record<string, unknown>
        out = "{"
        for (const key of Object.keys(record).sort()) {
          const written = write(record[key], path)
          if (written !== undefined) out += `${out === "{" ? "" : ","}${JSON.stringify(key)}:${written}`
        }
        out += "}"
      }
      path.pop()
      return out
    }
    default:
      return undefined
  }
}

/**
 * The SHA-256 (lower-case hex) of the {@link canonicalJson} of a value: the
 * `argumentsDigest` of a {@link Binding}. Throws `TypeError` on a cycle.
 *
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

/**
 * What a store implementation keeps. `insert` adds a new token; `find` reads
 * one; `transition` is a compare-and-set: it writes `next` only when the
 * stored status is still `from`, and says whether it did. {@link make} builds
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
export const memoryStorage = (): Storage => {
  const tokens = new Map<string, Token>()
  let sweepAt = 10_000
  const sweep = (now: number) => {
    for (const [id, token] of tokens) if (now >= token.expiresAt) tokens.delete(id)
    sweepAt = Math.max(10_000, tokens.size * 2)
  }
  return {
    insert: (token) =>
      Effect.sync(() => {
        if (tokens.size >= sweepAt) sweep(token.requestedAt)
        tokens.set(token.id, token)
      }),
    find: (tokenId) => Effect.sync(() => tokens.get(tokenId)),
    transition: (tokenId, from, next) =>
      Effect.sync(() => {
        if (tokens.get(tokenId)?.status !== from) return false
        tokens.set(tokenId, next)
        return true
      })
  }
}

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

const table = "rolecraft_approval_tokens"

const schemaSql = `CREATE TABLE IF NOT EXISTS ${table} (
  key TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  action TEXT NOT NULL,
  tool TEXT,
  arguments_digest TEXT NOT NULL,
  reason TEXT NOT NULL,
  status TEXT NOT NULL,
  requested_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  approver TEXT,
  decided_at INTEGER,
  rejection TEXT,
  used_at INTEGER
) STRICT`

interface Row {
  readonly key?: string
  readonly agent_id: string
  readonly action: string
  readonly tool: string | null
  readonly arguments_digest: string
  readonly reason: string
  readonly status: string
  readonly requested_at: number
  readonly expires_at: number
  readonly approver: string | null
  readonly decided_at: number | null
  readonly rejection: string | null
  readonly used_at: number | null
}

// Rows are keyed by the SHA-256 of the token id, so a copy of the database
// file does not hand out usable tokens.
const keyOf = (tokenId: string): string => nodeCrypto().hash("sha256", tokenId, "hex")

const orUndefined = <A>(value: A | null): A | undefined => (value === null ? undefined : value)

const fromRow = (id: string, row: Row): Token => ({
  id,
  binding: {
    agentId: row.agent_id,
    action: row.action,
    tool: orUndefined(row.tool),
    argumentsDigest: row.arguments_digest
  },
  reason: row.reason,
  status: row.status as Status,
  // Drivers may read BIGINT columns as strings or bigints: times are numbers here.
  requestedAt: Number(row.requested_at),
  expiresAt: Number(row.expires_at),
  approver: orUndefined(row.approver),
  decidedAt: row.decided_at === null ? undefined : Number(row.decided_at),
  rejection: orUndefined(row.rejection),
  usedAt: row.used_at === null ? undefined : Number(row.used_at)
})

/** How long SQLite itself may block the event loop waiting for a lock, per try. */
const driverBusyTimeout = 10

/**
 * How long an operation of the SQLite store waits for a lock in all (on
 * Effect's scheduler) before it fails: 5000 milliseconds.
 *
 * @category storage
 * @since 0.1.0
 */
export const defaultBusyTimeout = 5000

/** SQLITE_BUSY (5) and SQLITE_LOCKED (6), with any extended code. */
const isBusy = (cause: unknown): boolean => {
  const code = (cause as { readonly errcode?: unknown } | undefined)?.errcode
  return typeof code === "number" && ((code & 0xff) === 5 || (code & 0xff) === 6)
}

/**
 * Runs one statement; while the database is locked, tries again after 5 ms,
 * 10 ms, 20 ms … (at most 100 ms, jittered) until `budget` milliseconds have
 * passed on Effect's clock, then fails.
 */
const guard =
  (budget: number) =>
  <A>(what: string, run: () => A): Effect.Effect<A, ApprovalStorageError> =>
    Effect.try({ try: run, catch: (cause) => cause }).pipe(
      Effect.retry({
        while: isBusy,
        schedule: Schedule.max([
          Schedule.exponential("5 millis").pipe(
            Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.millis(100)))),
            Schedule.jittered
          ),
          Schedule.during(Duration.millis(Math.max(0, budget)))
        ])
      }),
      Effect.mapError(
        (cause) =>
          new ApprovalStorageError({
            message: isBusy(cause)
              ? `The approval store could not ${what}: the database stayed locked by another connection for ${budget} ms`
              : `The approval store could not ${what}: ${cause instanceof Error ? cause.message : String(cause)}`,
            cause
          })
      )
    )

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
 * @since 0.1.0
 */
export const sqliteStorage = (
  database: DatabaseSync,
  options?: { readonly busyTimeout?: number | undefined; readonly journal?: "wal" | undefined }
): Storage => {
  // Write-ahead logging lets readers go on while one process writes, so several processes contend far less.
  if (options?.journal === "wal") database.exec("PRAGMA journal_mode = WAL")
  database.exec(schemaSql)
  const guarded = guard(options?.busyTimeout ?? defaultBusyTimeout)
  const insert = database.prepare(
    `INSERT INTO ${table} (key, agent_id, action, tool, arguments_digest, reason, status, requested_at, expires_at,
       approver, decided_at, rejection, used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
  )
  const find = database.prepare(`SELECT * FROM ${table} WHERE key = ?`)
  const transition = database.prepare(
    `UPDATE ${table} SET status = ?, approver = ?, decided_at = ?, rejection = ?, used_at = ?
     WHERE key = ? AND status = ?`
  )
  return {
    insert: (token) =>
      guarded("write a token", () => {
        insert.run(
          keyOf(token.id),
          token.binding.agentId,
          token.binding.action,
          token.binding.tool ?? null,
          token.binding.argumentsDigest,
          token.reason,
          token.status,
          token.requestedAt,
          token.expiresAt,
          token.approver ?? null,
          token.decidedAt ?? null,
          token.rejection ?? null,
          token.usedAt ?? null
        )
      }),
    find: (tokenId) =>
      guarded("read a token", () => {
        const row = find.get(keyOf(tokenId)) as Row | undefined
        return row === undefined ? undefined : fromRow(tokenId, row)
      }),
    transition: (tokenId, from, next) =>
      guarded(
        "update a token",
        () =>
          transition.run(
            next.status,
            next.approver ?? null,
            next.decidedAt ?? null,
            next.rejection ?? null,
            next.usedAt ?? null,
            keyOf(tokenId),
            from
          ).changes === 1
      )
  }
}

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
  Layer.effect(
    ApprovalStore,
    Effect.gen(function* () {
      const failed = (cause: unknown) =>
        new ApprovalStorageError({
          message: `Cannot open the approval store ${options.filename}: ${cause instanceof Error ? cause.message : String(cause)}`,
          cause
        })
      const database = yield* Effect.acquireRelease(
        Effect.try({
          // Loaded here, not at import: importing the package must not load `node:sqlite`.
          try: () => {
            const { DatabaseSync } = process.getBuiltinModule("node:sqlite")
            // The driver's busy wait blocks the event loop: kept short, the store retries on Effect's scheduler.
            return new DatabaseSync(options.filename, { timeout: driverBusyTimeout })
          },
          catch: failed
        }),
        (database) => Effect.sync(() => database.isOpen && database.close())
      )
      const busyTimeout = options.busyTimeout ?? defaultBusyTimeout
      // Creating the table and preparing statements read the schema, which another process may hold locked too.
      const storage = yield* guard(busyTimeout)("open its table", () =>
        sqliteStorage(database, { busyTimeout, journal: "wal" })
      ).pipe(Effect.mapError((error) => failed(error.cause ?? error)))
      return make(storage)
    })
  )

const portableSchemaSql = `CREATE TABLE IF NOT EXISTS ${table} (
  key VARCHAR(64) PRIMARY KEY,
  agent_id TEXT NOT NULL,
  action TEXT NOT NULL,
  tool TEXT,
  arguments_digest TEXT NOT NULL,
  reason TEXT NOT NULL,
  status VARCHAR(16) NOT NULL,
  requested_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  approver TEXT,
  decided_at BIGINT,
  rejection TEXT,
  used_at BIGINT
)`

// Effect's SQL client is loaded by the first SQL store, not at import.
const SqlClientModule = Lazy.make((): Promise<typeof SqlClient> => import("effect/sql/SqlClient"))

/**
 * A {@link Storage} over `effect/sql`'s `SqlClient` (the table
 * `rolecraft_approval_tokens` is created if missing, with portable SQL).
 * Rows are keyed by the SHA-256 of the token id, like the SQLite store, so the
 * database holds no usable token. `transition` is one conditional
 * `UPDATE … WHERE key = … AND status = … RETURNING key`, atomic across every
 * process sharing the database. The client's name transforms are bypassed.
 * Fails with `ApprovalStorageError` when the table cannot be created.
 *
 * @since 0.1.0
 */
export const sqlStorage: Effect.Effect<Storage, ApprovalStorageError, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = (yield* SqlClientModule.use((module) => Effect.service(module.SqlClient))).withoutTransforms()
  yield* sql.unsafe(portableSchemaSql).pipe(
    // Two processes creating the table at once may collide in the catalog: the second try sees the table.
    Effect.retry({ times: 2 }),
    Effect.mapError(
      (cause) =>
        new ApprovalStorageError({ message: `Cannot create the approval table ${table}: ${cause.message}`, cause })
    )
  )
  const t = sql(table)
  return {
    insert: (token) =>
      Effect.orDie(sql`INSERT INTO ${t} (key, agent_id, action, tool, arguments_digest, reason, status,
          requested_at, expires_at, approver, decided_at, rejection, used_at)
        VALUES (${keyOf(token.id)}, ${token.binding.agentId}, ${token.binding.action}, ${token.binding.tool ?? null},
          ${token.binding.argumentsDigest}, ${token.reason}, ${token.status}, ${token.requestedAt}, ${token.expiresAt},
          ${token.approver ?? null}, ${token.decidedAt ?? null}, ${token.rejection ?? null}, ${token.usedAt ?? null})`),
    find: (tokenId) =>
      Effect.orDie(
        Effect.map(sql<Row>`SELECT * FROM ${t} WHERE key = ${keyOf(tokenId)}`, (rows) =>
          rows[0] === undefined ? undefined : fromRow(tokenId, rows[0])
        )
      ),
    transition: (tokenId, from, next) =>
      Effect.orDie(
        Effect.map(
          sql<Row>`UPDATE ${t} SET status = ${next.status}, approver = ${next.approver ?? null},
              decided_at = ${next.decidedAt ?? null}, rejection = ${next.rejection ?? null}, used_at = ${next.usedAt ?? null}
            WHERE key = ${keyOf(tokenId)} AND status = ${from} RETURNING key`,
          (rows) => rows.length === 1
        )
      )
  }
})

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
 * @since 0.1.0
 */
export const layerSql: Layer.Layer<ApprovalStore, ApprovalStorageError, SqlClient.SqlClient> = Layer.effect(
  ApprovalStore,
  Effect.map(sqlStorage, make)
)
