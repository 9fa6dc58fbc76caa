/**
 * A token as a row of the table `rolecraft_approval_tokens`, shared by the
 * SQLite and SQL stores. Rows are keyed by the SHA-256 of the token id, so a
 * copy of the database does not hand out usable tokens. A row read back is
 * decoded at the store boundary: one that does not decode (edited, cut, from
 * a newer version) is EXECUTION naming the store, the row's key and the field.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as StoreBoundary from "../../StoreBoundary.ts"
import type { PendingToken, Scope, Token } from "./storage.ts"

// node:crypto takes tens of milliseconds to load: it is loaded by the first key, not at import
// (Node keeps the module once loaded).
const nodeCrypto = () => process.getBuiltinModule("node:crypto")

/** The table's name. */
export const table = "rolecraft_approval_tokens"

/** A row as a driver reads it (unchecked). */
export interface Row {
  readonly key?: string
  readonly agent_id: unknown
  readonly action: unknown
  readonly tool: unknown
  readonly arguments_digest: unknown
  readonly reason: unknown
  readonly status: unknown
  readonly requested_at: unknown
  readonly expires_at: unknown
  readonly approver: unknown
  readonly decided_at: unknown
  readonly rejection: unknown
  readonly used_at: unknown
  readonly used_key?: unknown
  readonly scope_turn?: unknown
  readonly scope_call?: unknown
  readonly agents?: unknown
  readonly arguments?: unknown
  readonly definition_digest?: unknown
}

/**
 * The columns added after the first release, each with its portable type: the SHA-256 of the idempotency key
 * of the call that used the token (0.2.0), then the token's scope, what a person is shown of its call (the
 * path of agents as a JSON array, the redacted arguments) and its tool's definition digest (0.3.0). A table
 * made before one of them gets it on first open (`ALTER TABLE … ADD COLUMN`); its rows have none.
 */
export const addedColumns: ReadonlyArray<{ readonly name: string; readonly type: string }> = [
  { name: "used_key", type: "VARCHAR(64)" },
  { name: "scope_turn", type: "TEXT" },
  { name: "scope_call", type: "TEXT" },
  { name: "agents", type: "TEXT" },
  { name: "arguments", type: "TEXT" },
  { name: "definition_digest", type: "TEXT" }
]

/** The index the listing of pending tokens reads. */
export const pendingIndex = `CREATE INDEX IF NOT EXISTS ${table}_pending ON ${table} (status, agent_id, scope_turn)`

/** The values a token's row holds in the columns added after the first release, in {@link addedColumns}' order. */
export const addedValues = (token: Token): ReadonlyArray<string | null> => [
  token.usedKey ?? null,
  token.scope?.turn ?? null,
  token.scope?.call ?? null,
  token.agents === undefined ? null : JSON.stringify(token.agents),
  token.arguments ?? null,
  token.binding.definitionDigest ?? null
]

/** The key of a token's row: the SHA-256 (lower-case hex) of its id. */
export const keyOf = (tokenId: string): string => nodeCrypto().hash("sha256", tokenId, "hex")

const Millis = Schema.Int
const MillisOrNull = Schema.NullOr(Schema.Int)
const TextOrNull = Schema.NullOr(Schema.String)

/** What a stored row must hold. */
const StoredRow = Schema.Struct({
  agent_id: Schema.String,
  action: Schema.String,
  tool: TextOrNull,
  arguments_digest: Schema.String,
  reason: Schema.String,
  status: Schema.Literals(["pending", "approved", "rejected", "used"]),
  requested_at: Millis,
  expires_at: Millis,
  approver: TextOrNull,
  decided_at: MillisOrNull,
  rejection: TextOrNull,
  used_at: MillisOrNull,
  used_key: Schema.optionalKey(TextOrNull),
  scope_turn: Schema.optionalKey(TextOrNull),
  scope_call: Schema.optionalKey(TextOrNull),
  agents: Schema.optionalKey(Schema.NullOr(Schema.fromJsonString(Schema.Array(Schema.String)))),
  arguments: Schema.optionalKey(TextOrNull),
  definition_digest: Schema.optionalKey(TextOrNull)
})

type Stored = typeof StoredRow.Type

const given = <A>(value: A | null | undefined): value is A => value !== undefined && value !== null

const scopeOf = (decoded: Stored): Scope | undefined =>
  given(decoded.scope_turn)
    ? { turn: decoded.scope_turn, ...(given(decoded.scope_call) ? { call: decoded.scope_call } : {}) }
    : undefined

const bindingOf = (decoded: Stored): Token["binding"] => ({
  agentId: decoded.agent_id,
  action: decoded.action,
  tool: orUndefined(decoded.tool),
  argumentsDigest: decoded.arguments_digest,
  ...(given(decoded.definition_digest) ? { definitionDigest: decoded.definition_digest } : {})
})

// Drivers may read BIGINT columns as strings or bigints: times are numbers here.
const millis = (value: unknown): unknown =>
  typeof value === "bigint" || (typeof value === "string" && /^-?\d+$/.test(value)) ? Number(value) : value

const orUndefined = <A>(value: A | null): A | undefined => (value === null ? undefined : value)

/** The token a row holds (all but its id), or EXECUTION naming `where` and the field when it does not decode. */
const decoded = (store: string, where: string, row: Row): Effect.Effect<Omit<Token, "id">, StoreBoundary.StoreError> =>
  Effect.flatMap(
    StoreBoundary.decodeRow(store, where, StoredRow, {
      ...row,
      requested_at: millis(row.requested_at),
      expires_at: millis(row.expires_at),
      decided_at: millis(row.decided_at),
      used_at: millis(row.used_at)
    }),
    (stored) => {
      if (stored.status !== "pending" && stored.approver === null) {
        return Effect.fail(
          new StoreBoundary.StoreError({
            store,
            category: "EXECUTION",
            field: "approver",
            message: `${store}: the stored ${where} does not decode at approver: a ${stored.status} token names no approver`
          })
        )
      }
      const scope = scopeOf(stored)
      return Effect.succeed({
        binding: bindingOf(stored),
        reason: stored.reason,
        status: stored.status,
        requestedAt: stored.requested_at,
        expiresAt: stored.expires_at,
        approver: orUndefined(stored.approver),
        decidedAt: orUndefined(stored.decided_at),
        rejection: orUndefined(stored.rejection),
        usedAt: orUndefined(stored.used_at),
        ...(given(stored.used_key) ? { usedKey: stored.used_key } : {}),
        ...(scope === undefined ? {} : { scope }),
        ...(given(stored.agents) ? { agents: stored.agents } : {}),
        ...(given(stored.arguments) ? { arguments: stored.arguments } : {})
      })
    }
  )

/** The token of the row read for `id` from `store`, or EXECUTION when the row does not decode. */
export const fromRow = (store: string, id: string, row: Row): Effect.Effect<Token, StoreBoundary.StoreError> =>
  Effect.map(decoded(store, `token row ${keyOf(id).slice(0, 12)}…`, row), (token) => ({ id, ...token }))

/** The token of a row found by its `key` (a listing's): its id is not kept, so it is `""`. */
export const fromKeyedRow = (store: string, key: string, row: Row): Effect.Effect<Token, StoreBoundary.StoreError> =>
  Effect.map(decoded(store, `token row ${key.slice(0, 12)}…`, row), (token) => ({ id: "", ...token }))

/** A pending token as listed, under its row's `key`. */
export const pendingOf = (key: string, token: Omit<Token, "id">): PendingToken => ({
  key,
  binding: token.binding,
  scope: token.scope,
  agents: token.agents ?? [token.binding.agentId],
  arguments: token.arguments,
  reason: token.reason,
  requestedAt: token.requestedAt,
  expiresAt: token.expiresAt
})

/** The pending token of a row a listing read (its `key` is the row's), or EXECUTION when it does not decode. */
export const listedRow = (store: string, row: Row): Effect.Effect<PendingToken, StoreBoundary.StoreError> => {
  const key = typeof row.key === "string" ? row.key : ""
  return Effect.map(decoded(store, `token row ${key.slice(0, 12)}…`, row), (token) => pendingOf(key, token))
}
