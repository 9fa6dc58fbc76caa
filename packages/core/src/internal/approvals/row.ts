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
import type { Token } from "./storage.ts"

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
}

/**
 * The column added after the first release: the SHA-256 of the idempotency key of the call that used the
 * token. A table made before it gets it on first open (`ALTER TABLE … ADD COLUMN`).
 */
export const usedKeyColumn = "used_key"

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
  used_key: Schema.optionalKey(TextOrNull)
})

// Drivers may read BIGINT columns as strings or bigints: times are numbers here.
const millis = (value: unknown): unknown =>
  typeof value === "bigint" || (typeof value === "string" && /^-?\d+$/.test(value)) ? Number(value) : value

const orUndefined = <A>(value: A | null): A | undefined => (value === null ? undefined : value)

/** The token of the row read for `id` from `store`, or EXECUTION when the row does not decode. */
export const fromRow = (store: string, id: string, row: Row): Effect.Effect<Token, StoreBoundary.StoreError> => {
  const where = `token row ${keyOf(id).slice(0, 12)}…`
  return Effect.flatMap(
    StoreBoundary.decodeRow(store, where, StoredRow, {
      ...row,
      requested_at: millis(row.requested_at),
      expires_at: millis(row.expires_at),
      decided_at: millis(row.decided_at),
      used_at: millis(row.used_at)
    }),
    (decoded) => {
      if (decoded.status !== "pending" && decoded.approver === null) {
        return Effect.fail(
          new StoreBoundary.StoreError({
            store,
            category: "EXECUTION",
            field: "approver",
            message: `${store}: the stored ${where} does not decode at approver: a ${decoded.status} token names no approver`
          })
        )
      }
      return Effect.succeed({
        id,
        binding: {
          agentId: decoded.agent_id,
          action: decoded.action,
          tool: orUndefined(decoded.tool),
          argumentsDigest: decoded.arguments_digest
        },
        reason: decoded.reason,
        status: decoded.status,
        requestedAt: decoded.requested_at,
        expiresAt: decoded.expires_at,
        approver: orUndefined(decoded.approver),
        decidedAt: orUndefined(decoded.decided_at),
        rejection: orUndefined(decoded.rejection),
        usedAt: orUndefined(decoded.used_at),
        ...(decoded.used_key === undefined || decoded.used_key === null ? {} : { usedKey: decoded.used_key })
      })
    }
  )
}
